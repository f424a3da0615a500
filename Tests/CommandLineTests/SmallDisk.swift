import Foundation
import Glibc
import HexHarness
import HexTestSupport
import HexTestTools
import Testing

/// A tmpfs of a few MiB mounted on a fresh directory for one test (root), unmounted when this
/// value goes away: a disk the test can fill.
final class SmallDisk {
    let directory: TemporaryDirectory
    var path: String { directory.path }

    /// - Throws: when not root (the test is skipped unless `HEXD_REQUIRE_TOOLS` requires root), or when
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

/// A filesystem in an image file, on a loop device mounted on a fresh directory (root): a disk
/// whose blocks the test can copy as they stand, without what only the page cache holds, or one
/// of another kind than the machine's (exFAT, through FUSE, which has no hard links).
final class LoopDisk {
    /// The filesystem an image is made with.
    enum Format: String {
        case ext4, exfat
    }

    let directory: TemporaryDirectory
    let image: String
    private var device: String?
    var path: String { directory.path }

    /// Mounts `image`, first made as an empty filesystem of `mebibytes` when given.
    init(image: String, formatting mebibytes: Int? = nil, as format: Format = .ext4) async throws {
        try ExternalTool.requireRoot()
        let losetup = try ExternalTool.require("losetup")
        self.image = image
        directory = try TemporaryDirectory()
        if let mebibytes {
            let mkfs = try ExternalTool.require("mkfs." + format.rawValue)
            let descriptor = open(image, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            defer { if descriptor >= 0 { close(descriptor) } }
            try #require(descriptor >= 0 && ftruncate(descriptor, off_t(mebibytes) << 20) == 0, "make \(image)")
            let made = try await PackageExecutable.run(mkfs, format == .ext4 ? ["-q", "-F", image] : [image])
            try #require(made.status == 0, "mkfs.\(format.rawValue): \(made.standardError)")
        }
        let attached = try await PackageExecutable.run(losetup, ["-f", "--show", image])
        try #require(attached.status == 0, "losetup: \(attached.standardError)")
        let device = attached.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        self.device = device
        switch format {
        case .ext4:
            try #require(
                mount(device, directory.path, "ext4", 0, nil) == 0,
                "mount \(device): \(String(cString: strerror(errno)))")
        case .exfat:
            // The kernel here has no exFAT of its own: the FUSE driver mounts it, and goes on in the background.
            let mounted = try await PackageExecutable.run(
                try ExternalTool.require("mount.exfat-fuse"),
                [device, directory.path])
            try #require(mounted.status == 0, "mount.exfat-fuse: \(mounted.standardError)")
        }
    }

    /// Unmounts the filesystem and frees the loop device.
    func detach() {
        guard let device else { return }
        umount2(directory.path, Int32(MNT_DETACH))
        if let losetup = try? ExternalTool.require("losetup") {
            _ = try? SpawnedProcess(losetup, ["-d", device]).waitBlocking()
        }
        self.device = nil
    }

    deinit { detach() }

    func file(_ name: String) -> String { directory.file(name) }
}
