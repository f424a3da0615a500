import HexNet

/// Writes a file's bytes to a connection as they are read from disk: LocalSend's uploads and KDE
/// Connect's payloads alike.
package enum FileStreaming {
    /// Bytes of a file read and written at a time.
    static let chunk = 1 << 20

    /// Writes the first `size` bytes of `file` to `stream` by `deadline`, telling `progress` the
    /// bytes written at most every 200 ms and once at the end.
    /// - Throws: `DiskFileError` when the file cannot be read or ends before `size`; the stream's
    ///   error when it fails or the deadline passes.
    package static func write(
        _ file: DiskFile, size: Int64, to stream: any ByteStream, until deadline: ContinuousClock.Instant,
        progress: (Int64) async -> Void
    ) async throws {
        var position: Int64 = 0
        var reported = ContinuousClock.now
        while position < size {
            let wanted = Int(min(Int64(chunk), size - position))
            let at = position
            // A read may wait for the disk: on a thread of the blocking pool, as the file server reads.
            let bytes = try await BlockingPool.shared.run {
                var bytes = [UInt8](repeating: 0, count: wanted)
                let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: at) }
                return Array(bytes[..<count])
            }
            guard !bytes.isEmpty else {
                throw DiskFileError("read \(file.path)", reason: "it ended at byte \(position) of \(size)")
            }
            try await stream.write(bytes, timeout: deadline - .now)
            position += Int64(bytes.count)
            if ContinuousClock.now - reported >= .milliseconds(200) {
                await progress(position)
                reported = .now
            }
        }
        await progress(position)
    }
}
