// Full Foundation for ProcessInfo and Thread; the spawning itself is posix_spawn.
import CLinux
import Foundation
import HexNet
import Synchronization

/// A child process started with `posix_spawn`, for the tests and `hexbench`.
///
/// Foundation's `Process.run` is not used: on Linux with Swift 6.3 it now and then crashes the
/// whole test process (it copies 256 bytes of each `/proc/self/fd` entry, reading past glibc's
/// buffer: swift-corelibs-foundation #5472). The child gets standard input, output and error
/// from the descriptors given (`/dev/null` for any not given) and no other descriptor of ours.
public final class SpawnedProcess: Sendable {
    public let pid: pid_t
    private struct State {
        /// The wait status once reaped.
        var status: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    /// Filled by a thread of its own that waits for the child: not a dispatch thread, as tens of
    /// blocked waits would starve the global queues the tests and the reactor use.
    private let state = Mutex(State())
    private let reaped = DispatchSemaphore(value: 0)

    /// Starts `path` with `arguments`, the test's environment with `environment` added.
    /// - Throws: `SpawnError` when it cannot be started.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String] = [:],
        standardInput: Int32? = nil, standardOutput: Int32? = nil, standardError: Int32? = nil
    ) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            if let descriptor {
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        // Signals as a fresh process has them: test threads block some.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, FreshSignals.apply(to: &attributes))
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(path: path, reason: String(cString: strerror(result))) }
        self.pid = pid
        // The waiting thread holds this object until the child is reaped.
        Thread.detachNewThread { [self] in
            var result: Int32 = 0
            while waitpid(self.pid, &result, 0) < 0 && errno == EINTR {}
            let waiters = state.withLock { state in
                state.status = result
                defer { state.waiters = [] }
                return state.waiters
            }
            reaped.signal()
            let ended = exitStatus ?? -1
            waiters.forEach { $0.resume(returning: ended) }
        }
    }

    /// Whether it has not ended yet (or has ended and is not reaped yet).
    public var isRunning: Bool { state.withLock { $0.status } == nil }

    /// The exit code, or 128 plus the signal that ended it; nil while it runs.
    public var exitStatus: Int32? {
        state.withLock { $0.status }.map { $0 & 0x7F == 0 ? ($0 >> 8) & 0xFF : 128 + ($0 & 0x7F) }
    }

    /// Sends `signal`, unless it has been reaped (its pid may belong to another process then).
    public func send(_ signal: Int32) {
        state.withLock { if $0.status == nil { _ = kill(pid, signal) } }
    }

    /// Returns `exitStatus` once it has ended, without blocking a thread.
    public func exited() async -> Int32 {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool in
                guard state.status == nil else { return true }
                state.waiters.append(continuation)
                return false
            }
            if ended { continuation.resume(returning: exitStatus ?? -1) }
        }
    }

    /// Blocks the calling thread until it has ended; returns `exitStatus`.
    @discardableResult
    public func waitBlocking() -> Int32 {
        if let ended = exitStatus { return ended }
        reaped.wait()
        reaped.signal()  // for the next waiter
        return exitStatus ?? -1
    }
}

/// A program could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot run \(path): \(reason)" }

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// A pipe whose two ends are closed on exec: a child gets an end only through `dup2`.
public struct SpawnPipe: Sendable {
    public let read: Int32
    public let write: Int32

    public init() throws(SpawnError) {
        var ends: [Int32] = [0, 0]
        guard pipe2(&ends, O_CLOEXEC) == 0 else {
            throw SpawnError(path: "pipe2", reason: String(cString: strerror(errno)))
        }
        (read, write) = (ends[0], ends[1])
    }
}
