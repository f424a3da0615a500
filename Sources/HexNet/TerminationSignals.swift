import CLinux
import Glibc

/// SIGTERM and SIGINT as values to await: a handler writes each one's number to a pipe that the
/// daemon reads on the reactor. Whichever thread the kernel delivers a signal to, it reaches the
/// pipe (a disposition of SIG_IGN with a dispatch signal source lost one now and then, and the
/// daemon then never stopped), and none ends the process before the daemon says goodbye.
/// A child process starts with the default dispositions again (`exec` resets caught signals).
public final class TerminationSignals: Sendable {
    private let reading: Socket
    private let writing: Socket

    /// Installs the handler; made once, at the daemon's start.
    /// - Throws: `SocketError` when the pipe cannot be made or the handler installed.
    public init() throws(SocketError) {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_NONBLOCK | O_CLOEXEC) == 0 else { throw SocketError("make a pipe for signals") }
        reading = Socket(adopting: ends[0])
        writing = Socket(adopting: ends[1])
        guard hexd_catch_termination_signals(ends[1]) == 0 else { throw SocketError("catch SIGTERM and SIGINT") }
    }

    /// Waits for the next SIGTERM or SIGINT, and returns its number.
    /// - Throws: `CancellationError` when the task is cancelled, `SocketError` when the pipe fails.
    public func next() async throws -> Int32 {
        while true {
            var number: UInt8 = 0
            let count = read(reading.descriptor, &number, 1)
            if count == 1 { return Int32(number) }
            // The write end lives as long as this object: an end of file cannot come, and would not be waited on.
            guard count < 0 else { throw SocketError("read a signal: the pipe ended") }
            switch errno {
            case EAGAIN, EINTR:
                try await waitUntil(
                    .readable, descriptor: reading.descriptor, timeout: nil, operation: "wait for SIGTERM or SIGINT")
            default:
                throw SocketError("read a signal")
            }
        }
    }
}
