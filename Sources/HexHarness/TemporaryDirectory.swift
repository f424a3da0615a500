import HexKit

/// A fresh directory under /tmp, removed with everything in it when this value goes away.
///
/// The path is kept short on purpose: a Unix socket path inside it must fit in 108 bytes.
public final class TemporaryDirectory {
    public let path: String

    public init() throws {
        path = "/tmp/hexd-test-" + UUID().uuidString.prefix(13)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside this directory.
    public func file(_ name: String) -> String { path + "/" + name }
}
