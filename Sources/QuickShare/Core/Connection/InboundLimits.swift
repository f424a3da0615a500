/// The bounds of one connection a stranger opened to hexd: nothing it sends may hold more.
public struct InboundLimits: Sendable, Equatable {
    /// Bytes in one frame (NearDrop and rquickshare take up to 5 MiB; Android's chunks are 512 KiB).
    public var frameBytes: Int
    /// Bytes of one text, and of all BYTES payloads being assembled at once.
    public var textBytes: Int
    /// Frames read before the introduction: the handshake and the paired-key exchange take about ten.
    public var framesBeforeIntroduction: Int
    /// Files in one offer.
    public var files: Int

    public init(
        frameBytes: Int = 5 << 20, textBytes: Int = 1 << 20, framesBeforeIntroduction: Int = 64, files: Int = 1_000
    ) {
        self.frameBytes = frameBytes
        self.textBytes = textBytes
        self.framesBeforeIntroduction = framesBeforeIntroduction
        self.files = files
    }
}
