import CLinux
import Glibc
import Synchronization

/// A command run in a process group of its own and stopped whole (grandchildren included) at its
/// timeout or when the task is cancelled.
///
/// No thread blocks while it runs: it is spawned on the blocking pool, its end is a pidfd and
/// its output non-blocking pipes, all waited for on the reactor like sockets.
public enum ChildProcess {
    public struct Result: Sendable {
        /// The exit code, or nil when a signal ended it.
        public var exitCode: Int32?
        public var standardOutput: String
        public var standardError: String
        /// It ran past the timeout and was stopped.
        public var timedOut: Bool

        /// Standard error on one line (its lines joined by " / "), trimmed, at most `limit`
        /// characters: the first ones, or the last ones when `tail` (where a failing command
        /// usually says why).
        public func errorLine(limit: Int = 500, tail: Bool = false) -> String {
            let lines = standardError.split(whereSeparator: \.isNewline).map { line in
                var text = String(line.drop(while: \.isWhitespace))
                while text.last?.isWhitespace == true { text.removeLast() }
                return text
            }
            let line = lines.filter { !$0.isEmpty }.joined(separator: " / ")
            return String(tail ? line.suffix(limit) : line.prefix(limit))
        }
    }

    /// Runs `arguments` (the first found through PATH) with standard input read from the file
    /// `standardInput` (/dev/null by default), in the daemon's environment with `environment`
    /// added (or replacing variables of the same name).
    ///
    /// At `timeout` the group gets SIGTERM, and SIGKILL a second later; when the task is
    /// cancelled, SIGKILL at once. Once the command has ended, its pipes are read for 200 ms more
    /// at most (a process that left the group could keep them open forever).
    /// - Parameter outputLimit: the most bytes kept of each of standard output and error.
    /// - Throws: `ChildProcessError` when it cannot be started; `CancellationError` when the task
    ///   is cancelled (the process group is stopped and reaped first).
    public static func run(
        _ arguments: [String], timeout: Duration, outputLimit: Int = 1 << 20, standardInput: String = "/dev/null",
        environment: [String: String] = [:]
    ) async throws -> Result {
        let child = try await Child.spawn(arguments, standardInput: standardInput, environment: environment)
        enum Piece: Sendable {
            case output([UInt8]), errors([UInt8]), exit(Child.Exit), graceOver
        }
        let result = await withTaskGroup(of: Piece.self) { group -> Result in
            group.addTask { .output(await child.output.collect(limit: outputLimit)) }
            group.addTask { .errors(await child.errors.collect(limit: outputLimit)) }
            group.addTask { .exit(await child.exit(deadline: .now + timeout)) }
            var output: [UInt8]?
            var errors: [UInt8]?
            var exit: Child.Exit?
            while let piece = await group.next() {
                switch piece {
                case .output(let bytes): output = bytes
                case .errors(let bytes): errors = bytes
                case .graceOver: group.cancelAll()
                case .exit(let ended):
                    exit = ended
                    // What is left of the group goes too; its pipes get a moment more.
                    kill(-child.pid, SIGKILL)
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(200))
                        return .graceOver
                    }
                }
                if let output, let errors, let exit {
                    group.cancelAll()
                    return Result(
                        exitCode: exit.code, standardOutput: String(decoding: output, as: UTF8.self),
                        standardError: String(decoding: errors, as: UTF8.self), timedOut: exit.timedOut)
                }
            }
            // Not reached: the three pieces always arrive (cancelled readers return what they have).
            return Result(exitCode: nil, standardOutput: "", standardError: "", timedOut: false)
        }
        try Task.checkCancellation()
        return result
    }
}

extension ChildProcess {
    /// Starts a program that may run long after the caller stops caring about it (a browser
    /// opening a link): without a shell, in a process group of its own, reading and writing
    /// /dev/null. It is never waited for by the caller; it is reaped in the background when it
    /// ends (or handed to init when a short-lived caller exits first).
    /// - Throws: `ChildProcessError` when it cannot be started.
    public static func launch(_ arguments: [String]) async throws {
        guard let program = arguments.first else { throw ChildProcessError(description: "the command is empty") }
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard null >= 0 else { throw ChildProcessError(description: "cannot open /dev/null") }
        defer { close(null) }
        let pid = try await BlockingPool.shared.run {
            try Child.spawn(program, arguments, input: "/dev/null", environment: [:], output: null, errors: null)
        }
        let pidfd = hexd_pidfd_open(pid)
        Task.detached {
            defer { if pidfd >= 0 { close(pidfd) } }
            var status: Int32 = 0
            while waitpid(pid, &status, WNOHANG) == 0 {
                if pidfd >= 0 {
                    try? await waitUntil(
                        .readable, descriptor: pidfd, timeout: nil,
                        operation: "wait for a program to end")
                } else {
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}

/// Why a command could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
}

/// A spawned process: its pid, a pidfd for its end, and the read ends of its output pipes.
private final class Child: Sendable {
    struct Exit: Sendable {
        var code: Int32?
        var timedOut: Bool
    }

    let pid: pid_t
    /// -1 when the kernel offers no pidfd; its end is then polled for.
    private let pidfd: Int32
    let output: PipeReader
    let errors: PipeReader
    private let status = Mutex<Int32?>(nil)

    private init(pid: pid_t, pidfd: Int32, output: Int32, errors: Int32) {
        self.pid = pid
        self.pidfd = pidfd
        self.output = PipeReader(output)
        self.errors = PipeReader(errors)
    }

    deinit {
        if pidfd >= 0 { close(pidfd) }
    }

    /// Spawns on the blocking pool (posix_spawn blocks until the child has exec'd).
    static func spawn(
        _ arguments: [String], standardInput: String, environment: [String: String]
    ) async throws -> Child {
        guard let program = arguments.first else { throw ChildProcessError(description: "the command is empty") }
        let (outputRead, outputWrite) = try pipe()
        let (errorsRead, errorsWrite) = try pipe()
        let pid: pid_t
        do {
            pid = try await BlockingPool.shared.run {
                try spawn(
                    program, arguments, input: standardInput, environment: environment, output: outputWrite,
                    errors: errorsWrite)
            }
        } catch {
            [outputRead, outputWrite, errorsRead, errorsWrite].forEach { _ = close($0) }
            throw error as? ChildProcessError ?? ChildProcessError(description: "cannot run \(program): \(error)")
        }
        // The child has its copies; ours would keep the readers from ever seeing the end.
        close(outputWrite)
        close(errorsWrite)
        return Child(pid: pid, pidfd: hexd_pidfd_open(pid), output: outputRead, errors: errorsRead)
    }

    /// A pipe made close-on-exec atomically, so no other command spawned meanwhile inherits it
    /// (which would keep its write end open, and its reader waiting, until that command ends).
    /// The read end is non-blocking: it is waited for on the reactor.
    private static func pipe() throws(ChildProcessError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe2(&ends, O_CLOEXEC) == 0 else {
            throw ChildProcessError(description: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        return (ends[0], ends[1])
    }

    fileprivate static func spawn(
        _ program: String, _ arguments: [String], input: String, environment: [String: String], output: Int32,
        errors: Int32
    ) throws(ChildProcessError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        // dup2 clears close-on-exec on the copies, so the command keeps them.
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, errors, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own (pgid = its pid), so a timeout stops its children too, and signals as
        // a fresh process has them.
        let signals = FreshSignals.apply(to: &attributes)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP) | signals)
        posix_spawnattr_setpgroup(&attributes, 0)

        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The daemon's environment, with `environment` added.
        let added = Set(environment.keys)
        var inherited: [String] = []
        var entry = environ
        while let variable = entry.pointee {
            let text = String(cString: variable)
            if !added.contains(String(text.prefix { $0 != "=" })) { inherited.append(text) }
            entry += 1
        }
        let envp = (inherited + environment.map { "\($0.key)=\($0.value)" }).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw ChildProcessError(description: "cannot run \(program): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Waits for the process to end, stopping its group at `deadline` (SIGTERM, then SIGKILL a
    /// second later) or on cancellation (SIGKILL), and reaps it. Always returns, reaped.
    func exit(deadline: ContinuousClock.Instant) async -> Exit {
        do {
            try await ended(before: deadline)
            return Exit(code: code, timedOut: false)
        } catch is CancellationError {
            kill(-pid, SIGKILL)
            await endedRegardless()
            return Exit(code: code, timedOut: false)
        } catch {
            kill(-pid, SIGTERM)
            if (try? await ended(before: .now + .seconds(1))) == nil {
                kill(-pid, SIGKILL)
                await endedRegardless()
            }
            return Exit(code: code, timedOut: true)
        }
    }

    /// The exit code of the reaped process; nil when a signal ended it.
    private var code: Int32? {
        guard let status = status.withLock({ $0 }), status & 0x7F == 0 else { return nil }
        return (status >> 8) & 0xFF
    }

    /// Returns once the process has ended and is reaped.
    /// - Throws: `SocketError.timedOut` at `deadline`; `CancellationError`.
    private func ended(before deadline: ContinuousClock.Instant?) async throws {
        while !reaped() {
            let remaining = deadline.map { $0 - .now }
            if let remaining, remaining <= .zero { throw SocketError.timedOut("wait for a command to end") }
            if pidfd >= 0 {
                try await waitUntil(
                    .readable, descriptor: pidfd, timeout: remaining, operation: "wait for a command to end")
            } else {
                try await Task.sleep(for: min(remaining ?? .milliseconds(20), .milliseconds(20)))
            }
        }
    }

    /// Waits for a killed process to end, even though the calling task is cancelled: a task of
    /// its own does the waiting, as cancelled waits would return at once. SIGKILL cannot be
    /// caught, so the wait is short.
    private func endedRegardless() async {
        await Task { try? await ended(before: nil) }.value
    }

    /// Reaps the process if it has ended; true once it is reaped.
    private func reaped() -> Bool {
        status.withLock { status in
            guard status == nil else { return true }
            var result: Int32 = 0
            var ended: pid_t
            repeat { ended = waitpid(pid, &result, WNOHANG) } while ended < 0 && errno == EINTR
            // ECHILD: reaped by someone else, which cannot happen here; taken as ended.
            guard ended == pid || ended < 0 else { return false }
            status = ended == pid ? result : 0x7F
            return true
        }
    }
}

/// The read end of a pipe, read without blocking until the end of the pipe or cancellation.
private final class PipeReader: Sendable {
    private let descriptor: Int32

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// What the pipe delivers until its end, or until the task is cancelled; at most `limit`
    /// bytes are kept (the rest is read and dropped, so the writer is never stuck).
    func collect(limit: Int) async -> [UInt8] {
        var collected: [UInt8] = []
        while true {
            let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16_384) { buffer in
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                if count > 0 { collected += buffer[..<min(count, max(limit - collected.count, 0))] }
                return count
            }
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            guard count < 0, errno == EAGAIN else { return collected }
            guard
                (try? await waitUntil(
                    .readable, descriptor: descriptor, timeout: nil, operation: "read a command's output")) != nil
            else {
                return collected
            }
        }
    }
}
