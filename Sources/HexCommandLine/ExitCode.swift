/// The exit codes of hexd's executables, in the sysexits(3) convention scripts can rely on.
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// Anything not covered below.
    case failure = 1
    /// The command line is wrong (EX_USAGE).
    case usage = 64
}
