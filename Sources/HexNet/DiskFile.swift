import CLinux
import Glibc

/// An open regular file read or written at offsets (`pread`, `pwrite`): a shared file being
/// served, a download being written. The descriptor is closed when the value goes.
///
/// Calls block their thread for as long as the disk takes; a chunk at a time is short.
public final class DiskFile: @unchecked Sendable {
    // Unchecked Sendable: the descriptor is only read and positioned-written, which the kernel
    // serialises; the value holds nothing else that changes.
    private let descriptor: Int32
    public let path: String

    /// How a file looks now: enough to tell whether it changed since it was last looked at.
    public struct Status: Sendable, Hashable {
        public var device: UInt64
        public var inode: UInt64
        public var size: Int64
        /// Nanoseconds since 1970.
        public var modified: Int64
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Opens a regular file to read (following symbolic links, as the user who named it did).
    /// - Throws: `DiskFileError` (`isMissing` when there is no such file), also for a directory or a
    ///   device, and with code `EMFILE` when the file would take one of the descriptors kept free
    ///   (`DescriptorHeadroom.kept`).
    public static func reading(_ path: String) throws(DiskFileError) -> DiskFile {
        let file = try opened(path, open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
        guard try file.isRegular() else { throw DiskFileError("read \(path)", reason: "it is not a regular file") }
        return file
    }

    /// Opens a regular file to read and write, made (mode 0644 less the umask) when it is not
    /// there; never through a symbolic link.
    /// - Throws: `DiskFileError`, as `reading` does; a file it made and then refused is removed.
    public static func writing(_ path: String) throws(DiskFileError) -> DiskFile {
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY
        // Made here (exclusively), or there already: a refusal then removes only what it made.
        var descriptor = open(path, flags | O_CREAT | O_EXCL, 0o644)
        let made = descriptor >= 0
        if !made && errno == EEXIST { descriptor = open(path, flags) }
        let file: DiskFile
        do {
            file = try opened(path, descriptor)
        } catch {
            if made { remove(path) }
            throw error
        }
        guard try file.isRegular() else { throw DiskFileError("write \(path)", reason: "it is not a regular file") }
        return file
    }

    /// The file `open` just gave `descriptor` for, unless it failed or took one of the descriptors
    /// kept free.
    private static func opened(_ path: String, _ descriptor: Int32) throws(DiskFileError) -> DiskFile {
        guard descriptor >= 0 else { throw DiskFileError("open \(path)") }
        guard DescriptorHeadroom.allows(descriptor) else {
            close(descriptor)
            throw DiskFileError(
                "open \(path)", code: EMFILE, reason: DescriptorHeadroom.refusal(keeping: DescriptorHeadroom.kept))
        }
        return DiskFile(descriptor: descriptor, path: path)
    }

    public func status() throws(DiskFileError) -> Status {
        try rawStatus().status
    }

    private func isRegular() throws(DiskFileError) -> Bool {
        try rawStatus().mode & S_IFMT == S_IFREG
    }

    private func rawStatus() throws(DiskFileError) -> (status: Status, mode: UInt32) {
        var information = stat()
        guard fstat(descriptor, &information) == 0 else { throw DiskFileError("look at \(path)") }
        let modified = Int64(information.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(information.st_mtim.tv_nsec)
        return (
            Status(
                device: UInt64(information.st_dev), inode: UInt64(information.st_ino),
                size: Int64(information.st_size), modified: modified), information.st_mode
        )
    }

    /// Reads at most `buffer.count` bytes at `offset` into `buffer`; fewer only at the end of the file.
    /// - Returns: how many were read, 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(DiskFileError) -> Int {
        var total = 0
        while total < buffer.count {
            let count = pread(
                descriptor, buffer.baseAddress?.advanced(by: total), buffer.count - total,
                off_t(offset + Int64(total)))
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw DiskFileError("read \(path)") }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// The file's first `limit` bytes, or all of it when it is shorter.
    public func contents(upTo limit: Int) throws(DiskFileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(limit, 0))
        var result: Result<Int, DiskFileError> = .success(0)
        bytes.withUnsafeMutableBytes { buffer in
            result = Result { () throws(DiskFileError) in try read(into: buffer, at: 0) }
        }
        return Array(bytes.prefix(try result.get()))
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(DiskFileError) {
        var total = 0
        while total < bytes.count {
            let count = pwrite(
                descriptor, bytes.baseAddress?.advanced(by: total), bytes.count - total,
                off_t(offset + Int64(total)))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw DiskFileError("write \(path)") }
            total += count
        }
    }

    /// Cuts the file to `size` bytes.
    public func truncate(to size: Int64) throws(DiskFileError) {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw DiskFileError("truncate \(path)") }
    }

    /// Starts writing `count` bytes from `offset` to the disk, without waiting: what a large
    /// write leaves for `sync` is then only its last part. Best effort: `sync` reports failures.
    public func startWriteback(from offset: Int64, count: Int64) {
        _ = hexd_start_writeback(descriptor, offset, count)
    }

    /// Waits until what was written is on the disk.
    public func sync() throws(DiskFileError) {
        guard fdatasync(descriptor) == 0 else { throw DiskFileError("sync \(path)") }
    }

    /// Gives the file the name `newPath`, failing if that name is taken, so that nothing is ever
    /// overwritten (`rename` alone would replace what is there): a second link, where the file
    /// system has them (the first name stays until removed); else (FAT, exFAT, some network file
    /// systems) the name is claimed by a file made exclusively, and the file renamed onto it.
    /// - Throws: `DiskFileError` (`isTaken` when `newPath` exists).
    public func name(as newPath: String) throws(DiskFileError) {
        if Glibc.link(path, newPath) == 0 { return }
        guard [EPERM, EOPNOTSUPP, EMLINK, ENOSYS].contains(errno) else {
            throw DiskFileError("name \(path) as \(newPath)")
        }
        let claim = open(newPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard claim >= 0 else { throw DiskFileError("name \(path) as \(newPath)") }
        close(claim)
        guard rename(path, newPath) == 0 else {
            let error = DiskFileError("name \(path) as \(newPath)")
            unlink(newPath)
            throw error
        }
    }

    /// Removes a file's name; none there is no error.
    public static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// Makes the names made in `directory` durable.
    public static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}

/// A file could not be opened, read or written: the operation, the path, and the system's reason.
public struct DiskFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let operation: String
    public let reason: String
    /// The `errno` of the failing call; 0 when the failure is not the system's.
    public let code: Int32

    /// The failure of the call just made, from `errno`.
    init(_ operation: String) {
        code = errno
        self.operation = operation
        reason = String(cString: strerror(code))
    }

    public init(_ operation: String, reason: String) {
        self.init(operation, code: 0, reason: reason)
    }

    /// A failure of the system's kind (`code`, an `errno` value) that the call did not report itself.
    init(_ operation: String, code: Int32, reason: String) {
        self.operation = operation
        self.reason = reason
        self.code = code
    }

    public var isMissing: Bool { code == ENOENT || code == ENOTDIR }
    public var isTaken: Bool { code == EEXIST }
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT }

    public var description: String { "cannot \(operation): \(reason)" }
}
