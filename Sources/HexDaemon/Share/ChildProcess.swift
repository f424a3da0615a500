import Dispatch
import HexKit
import Synchronization

import Glibc

/// A command run in its own process group, its output read without blocking a thread, and
/// stopped whole (grandchildren included) on timeout or cancellation.
enum ChildProcess {
    struct Result: Sendable {
        /// The exit code, or nil when a signal ended it.
        var exitCode: Int32?
        var standardOutput: String
        var standardError: String
        /// It ran past the timeout and was stopped.
        var timedOut: Bool
    }

    /// Runs `arguments` (the first found through PATH) with standard input from /dev/null.
    /// - Throws: `LinkProviderError` when it cannot be started; `CancellationError` when the task
    ///   is cancelled (the process group is stopped first).
    static func run(_ arguments: [String], timeout: Duration) async throws -> Result {
        let (pid, outputRead, errorRead) = try spawnLock.withLock { _ in
            let (outputRead, outputWrite) = try pipe()
            let (errorRead, errorWrite) = try pipe()
            defer { close(outputWrite); close(errorWrite) }
            do {
                return (try spawn(arguments, output: outputWrite, error: errorWrite), outputRead, errorRead)
            } catch {
                close(outputRead)
                close(errorRead)
                throw error
            }
        }
        defer { close(outputRead); close(errorRead) }
        let outputReader = PipeReader(outputRead)
        let errorReader = PipeReader(errorRead)
        let watchdog = Task { () -> Bool in
            guard (try? await Task.sleep(for: timeout)) != nil else { return false }
            kill(-pid, SIGTERM)
            if (try? await Task.sleep(for: .seconds(1))) != nil { kill(-pid, SIGKILL) }
            return true
        }
        let status = await withTaskCancellationHandler {
            await reap(pid)
        } onCancel: {
            kill(-pid, SIGKILL)
        }
        watchdog.cancel()
        let timedOut = await watchdog.value
        // The group is gone or going; what is left in the pipes is read for a moment more (a
        // process that left the group could keep them open forever).
        kill(-pid, SIGKILL)
        let result = Result(exitCode: status & 0x7F == 0 ? (status >> 8) & 0xFF : nil,
                            standardOutput: await outputReader.text(within: .milliseconds(200)),
                            standardError: await errorReader.text(within: .milliseconds(200)), timedOut: timedOut)
        try Task.checkCancellation()
        return result
    }

    /// Held while pipes are made and a command spawned: another command spawned in between
    /// would inherit the pipes before they are marked close-on-exec.
    private static let spawnLock = Mutex(())

    /// A pipe closed on exec, so it does not leak into other commands (which would keep its write
    /// end open, and its reader waiting, until they end).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw LinkProviderError("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    private static func spawn(_ arguments: [String], output: Int32, error: Int32) throws -> pid_t {
        guard let program = arguments.first else { throw LinkProviderError("the link command is empty") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, error, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own (pgid = its pid), so a timeout stops its children too.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        let argv = arguments.map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + environment).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, program, &actions, &attributes, argv, environment)
        guard status == 0 else { throw LinkProviderError("cannot run \(program): \(String(cString: strerror(status)))") }
        return pid
    }

    /// Waits for the child to end (on a thread that may block) and returns its wait status.
    private static func reap(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
    }

}

/// Reads a pipe to its end on a dispatch thread with plain `poll` and `read` (no dispatch
/// sources: pipes shared with child processes are kept away from the event loop), until the end
/// of the pipe or until told to stop.
private final class PipeReader: Sendable {
    /// When to stop reading, once the process has ended.
    private final class Deadline: Sendable {
        let instant = Mutex<ContinuousClock.Instant?>(nil)
    }

    private let stopAt = Deadline()
    private let collected: Task<String, Never>

    /// Starts reading `descriptor` (which stays open until `text(within:)` has returned).
    init(_ descriptor: Int32) {
        let stopAt = stopAt
        collected = Task {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: Self.drain(descriptor, stopAt: stopAt)) }
            }
        }
    }

    /// What the pipe delivered (at most 1 MiB), reading on for at most `grace` from now.
    func text(within grace: Duration) async -> String {
        stopAt.instant.withLock { $0 = .now + grace }
        return await collected.value
    }

    private static func drain(_ descriptor: Int32, stopAt: Deadline) -> String {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, 100)
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    if collected.count < 1 << 20 { collected += buffer[..<count] }
                    continue
                }
                if count == 0 || (errno != EINTR && errno != EAGAIN) { break }
            } else if ready < 0 && errno != EINTR {
                break
            }
            if let deadline = stopAt.instant.withLock({ $0 }), ContinuousClock.now >= deadline { break }
        }
        return String(decoding: collected, as: UTF8.self)
    }
}
