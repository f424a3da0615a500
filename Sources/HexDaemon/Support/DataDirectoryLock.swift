import Glibc
import HexCommandLine

/// An exclusive lock on a data directory, held for the daemon's lifetime, so two daemons never
/// share one database and control socket. The kernel releases it when the process ends, however
/// it ends.
final class DataDirectoryLock {
    private let descriptor: Int32

    /// - Throws: `DaemonError.alreadyRunning` when another process holds the lock.
    init(_ dataDirectory: DataDirectory) throws {
        let path = dataDirectory.lockPath
        let directory = dataDirectory.path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DaemonError.cannotStart("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            var owner = [UInt8](repeating: 0, count: 32)
            let count = read(descriptor, &owner, owner.count)
            close(descriptor)
            let pid = String(decoding: owner.prefix(max(count, 0)), as: UTF8.self).filter(\.isNumber)
            throw DaemonError.alreadyRunning(directory: directory, pid: pid)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
    }

    deinit { close(descriptor) }
}

/// Why the daemon could not start.
public enum DaemonError: Error, CustomStringConvertible {
    case alreadyRunning(directory: String, pid: String)
    case cannotStart(String)

    public var description: String {
        switch self {
        case .alreadyRunning(let directory, let pid):
            "another hexd\(pid.isEmpty ? "" : " (pid \(pid))") is running with the data directory \(directory); "
                + "stop it, or give this one another --data-dir"
        case .cannotStart(let reason): reason
        }
    }
}
