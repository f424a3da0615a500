/// A part of the daemon that serves until the daemon stops: `Daemon.run` starts every service
/// in one task group once all are made, and cancels them together at SIGTERM or SIGINT. A new
/// part (a web page, a notifier) joins by conforming and being listed there.
package protocol DaemonService: Sendable {
    /// Serves until the task is cancelled.
    func run() async
}
