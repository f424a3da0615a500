/// Cuts Quick Share's frames out of a byte stream: each a 4-byte big-endian length, then that many
/// bytes. A length over the limit is refused as soon as its four bytes arrive, before anything of
/// the frame is held.
public struct FrameDecoder: Sendable {
    public let maximumFrameBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maximumFrameBytes: Int) {
        self.maximumFrameBytes = maximumFrameBytes
    }

    /// Takes `bytes` read from the stream and gives the frames they complete, in order.
    /// - Throws: `QuickShareError` when a frame's length is over `maximumFrameBytes`.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(QuickShareError) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var frames: [[UInt8]] = []
        while buffer.count - start >= 4 {
            let length = buffer[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= maximumFrameBytes else {
                throw QuickShareError("a frame of \(length) bytes is over \(maximumFrameBytes)")
            }
            guard buffer.count - start - 4 >= length else { break }
            frames.append(Array(buffer[start + 4..<start + 4 + length]))
            start += 4 + length
        }
        // What is consumed goes once it is most of the buffer, so a long stream costs no copying per frame.
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        return frames
    }

    /// `frame` with its length in front, as it goes on the wire.
    public static func framed(_ frame: [UInt8]) -> [UInt8] {
        let count = UInt32(clamping: frame.count)
        return [
            UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16),
            UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count),
        ] + frame
    }
}
