import HexKit
import HexNet
import HexTLS

/// SHA-256 of a file, or of its first bytes, read in chunks on the blocking pool (a large file
/// takes a while, and no task of the cooperative pool waits for the disk meanwhile).
package enum FileDigest {
    /// Bytes read at a time: large enough that a chunk costs a few system calls, small enough to
    /// keep memory flat however large the file.
    static let chunk = 1 << 20

    /// The digest of `file`'s first `count` bytes, or of all of it when `count` is nil.
    /// - Throws: `DiskFileError` (a read failed, or the file is shorter than `count`), `TLSError`.
    package static func sha256(of file: DiskFile, count: Int64? = nil) async throws -> String {
        try await digest(of: file, count: count).finish()
    }

    /// A digest fed `file`'s first `count` bytes (all of it when nil), to be fed more.
    package static func digest(of file: DiskFile, count: Int64? = nil) async throws -> SHA256Digest {
        try await BlockingPool.shared.run {
            let digest = try SHA256Digest()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
            defer { buffer.deallocate() }
            var offset: Int64 = 0
            while count.map({ offset < $0 }) ?? true {
                let wanted = count.map { Int(min(Int64(chunk), $0 - offset)) } ?? chunk
                let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset)
                if read == 0 {
                    guard count == nil else {
                        throw DiskFileError("read \(file.path)", reason: "it ends at \(offset) bytes")
                    }
                    break
                }
                digest.update(UnsafeRawBufferPointer(rebasing: buffer[..<read]))
                offset += Int64(read)
            }
            return digest
        }
    }
}

extension FileIdentity {
    package init(_ status: DiskFile.Status) {
        self.init(device: status.device, inode: status.inode, size: status.size, modified: status.modified)
    }
}
