import Foundation
import HexTestSupport
import HexTestTools
import Testing

import Glibc

/// A tmpfs of a few MiB mounted on a fresh directory for one test (root), unmounted when this
/// value goes away: a disk the test can fill.
final class SmallDisk {
    let directory: TemporaryDirectory
    var path: String { directory.path }

    /// - Throws: when not root (the test is skipped where `HEXD_ALLOW_SKIP` allows it), or when
    ///   the mount fails.
    init(mebibytes: Int) throws {
        try ExternalTool.requireRoot()
        directory = try TemporaryDirectory()
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(mebibytes)m") == 0 else {
            throw SocketFailure("mount a tmpfs at \(directory.path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { umount2(directory.path, Int32(MNT_DETACH)) }

    func file(_ name: String) -> String { directory.file(name) }

    /// Writes `name` until the disk says no (at most 1 GiB, in 64 KiB writes).
    func fill(_ name: String) {
        let descriptor = open(file(name), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        let chunk = [UInt8](repeating: 0, count: 65_536)
        for _ in 0..<16_384 where write(descriptor, chunk, chunk.count) == chunk.count {}
        close(descriptor)
    }

    /// The bytes the files directly inside `directory` take on the disk.
    static func bytesUsed(in directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.reduce(0) { total, name in
            var status = stat()
            guard lstat(directory + "/" + name, &status) == 0 else { return total }
            return total + Int(status.st_blocks) * 512
        }
    }

    private struct SocketFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
