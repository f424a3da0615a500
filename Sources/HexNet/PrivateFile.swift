import Glibc

/// A small file only its owner may read (the identity's key and certificate, the page's token),
/// written whole or not at all.
public enum PrivateFile {
    /// Files this large are not an identity.
    public static let maximumSize = 64 * 1024

    /// The file's bytes, or nil when it does not exist.
    public static func read(_ path: String) throws(PrivateFileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw PrivateFileError("read \(path)", reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: maximumSize + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes[count...].withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw PrivateFileError("read \(path)", reason: String(cString: strerror(errno))) }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumSize else {
            throw PrivateFileError("read \(path)", reason: "it is larger than \(maximumSize) bytes")
        }
        return Array(bytes[..<count])
    }

    /// Writes `bytes` to a new file at `path` (mode 0600), through a temporary file renamed into
    /// place once it is on disk, so a crash leaves the old state or the new, never half a file.
    public static func write(_ bytes: [UInt8], to path: String) throws(PrivateFileError) {
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw PrivateFileError("write \(temporary)", reason: String(cString: strerror(errno)))
        }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw PrivateFileError("write \(temporary)", reason: reason)
            }
            written += count
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw PrivateFileError("write \(path)", reason: reason)
        }
        // The rename itself is on disk only once its directory is.
        let slash = path.lastIndex(of: "/")
        let directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let directory = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        defer { close(directory) }
        _ = fsync(directory)
    }
}

/// A private file could not be read or written.
public struct PrivateFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done, with the path: `write /path/identity.key`.
    public let operation: String
    public let reason: String

    init(_ operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "cannot \(operation): \(reason)" }
}
