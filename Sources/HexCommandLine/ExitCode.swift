/// The exit codes of hexd's executables, in the sysexits(3) convention scripts can rely on.
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// Anything not covered below.
    case failure = 1
    /// The command line is wrong (EX_USAGE).
    case usage = 64
    /// The daemon is not running (EX_UNAVAILABLE).
    case unavailable = 69
    /// A timeout, or the peer could not be reached: try again later (EX_TEMPFAIL).
    case temporaryFailure = 75
    /// The peer refused: the sender is blocked there, or it rejected the envelope (EX_NOPERM).
    case denied = 77

    /// A stable name for scripts (`--json` errors).
    public var name: String {
        switch self {
        case .success: "success"
        case .failure: "failure"
        case .usage: "usage"
        case .unavailable: "unavailable"
        case .temporaryFailure: "temporaryFailure"
        case .denied: "denied"
        }
    }
}
