/// Splits a byte stream into lines: one envelope per line, ended by `\n` (a `\r` before it is
/// dropped), blank lines skipped, each line at most `maximumLineLength` bytes.
///
/// Pure bookkeeping, no I/O: feed it what the socket read, take the lines out.
public struct LineFramer: Sendable {
    /// What the framer found in the bytes fed so far.
    public enum Item: Sendable, Equatable {
        case line([UInt8])
        /// A line grew past the cap. The stream cannot be resynchronised: this is reported once,
        /// and the framer yields nothing after it.
        case lineTooLong
    }

    public let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the unconsumed bytes start. Consumed bytes are dropped in bulk, not per line.
    private var start = 0
    /// How far the unconsumed bytes have been searched for a newline, so a long line is scanned once.
    private var scanned = 0
    /// Set once a line was too long.
    private var failed = false

    public init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard !failed else { return }
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line, `.lineTooLong`, or nil when more bytes are needed.
    public mutating func next() -> Item? {
        while !failed {
            guard let newline = buffer[max(scanned, start)...].firstIndex(of: UInt8(ascii: "\n")) else {
                scanned = buffer.count
                return pendingByteCount > maximumLineLength ? fail() : nil
            }
            var end = newline
            if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = buffer[start..<end]
            start = newline + 1
            scanned = start
            guard line.count <= maximumLineLength else { return fail() }
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
            let item = Item.line(Array(line))
            if start == buffer.count { releaseConsumed() }
            return item
        }
        return nil
    }

    /// Takes out at most `maximumCount` of the bytes after the last complete line, as they are: a
    /// stream that switches from lines to raw bytes (a file after the line announcing it) reads
    /// what came with the line from here first.
    public mutating func takePending(maximumCount: Int) -> ArraySlice<UInt8> {
        let end = start + min(max(maximumCount, 0), pendingByteCount)
        let taken = buffer[start..<end]
        start = end
        scanned = max(scanned, start)
        if start == buffer.count { releaseConsumed() }
        return taken
    }

    /// Everything fed has been taken out: drop it, and the storage too after a large line, so
    /// an idle connection holds no memory for lines it received long ago.
    private mutating func releaseConsumed() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
        start = 0
        scanned = 0
    }

    /// The storage kept between lines.
    private static let retainedCapacity = 4_096

    private mutating func fail() -> Item {
        failed = true
        buffer = []
        start = 0
        scanned = 0
        return .lineTooLong
    }

    /// Bytes received after the last complete line (a line cut short when the peer closed).
    public var pendingByteCount: Int { buffer.count - start }

    /// The memory the framer holds for them (its buffer's capacity), which is what a budget on
    /// unfinished lines must count: a growing buffer holds up to twice what it was given.
    public var heldByteCount: Int { pendingByteCount == 0 && buffer.isEmpty ? 0 : buffer.capacity }
}
