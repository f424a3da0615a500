/// Reads a body sent with `Transfer-Encoding: chunked` (RFC 9112, section 7.1) from bytes as they
/// arrive: a pure state machine that hands on the body's bytes and keeps none of them. LocalSend
/// 1.18 streams every file it uploads so (its core's `upload` wraps a stream, with no length).
///
/// Every part is bounded: a chunk-size line (the size in hex, then extensions, which are ignored)
/// within `Limits.sizeLineBytes`, the trailer section (read and dropped) within
/// `Limits.trailerBytes`, and the body's bytes together within `Limits.bodyBytes`, whatever the
/// chunks claim. A line may end with CRLF or a bare LF (RFC 9112, section 2.2). It never traps on
/// what it is fed; after a failure it takes nothing more.
public struct ChunkedDecoder: Sendable {
    public struct Limits: Sendable, Equatable {
        /// The most the body's bytes may add up to.
        public var bodyBytes: Int64
        /// A chunk-size line with its extensions and line end.
        public var sizeLineBytes = 1_024
        /// The whole trailer section.
        public var trailerBytes = 8 * 1_024

        public init(bodyBytes: Int64) {
            self.bodyBytes = bodyBytes
        }
    }

    /// Why the bytes are no chunked body this decoder takes.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed(String)
        /// The chunks add up to more than `Limits.bodyBytes`.
        case tooLarge(Int64)
        /// A size line or the trailer section is longer than its bound.
        case lineTooLong

        public var description: String {
            switch self {
            case .malformed(let reason): "a malformed chunked body: \(reason)"
            case .tooLarge(let limit): "the chunks add up to more than \(limit) bytes"
            case .lineTooLong: "a chunk-size line or the trailers are longer than they may be"
            }
        }
    }

    private enum State: Sendable, Equatable {
        /// Reading a chunk-size line: its bytes so far (the line end left out).
        case size([UInt8])
        /// Inside a chunk: this many bytes of it to come.
        case data(Int64)
        /// After a chunk's bytes: its line end, `sawReturn` once its CR came.
        case dataEnd(sawReturn: Bool)
        /// The trailer section: bytes of the current line so far, and of the section.
        case trailer(line: Int, section: Int)
        case done
        case failed
    }

    public let limits: Limits
    private var state = State.size([])
    /// The body's bytes handed on so far.
    public private(set) var bodyBytes: Int64 = 0

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Whether the last chunk and the trailer section have come: the body is whole.
    public var isFinished: Bool { state == .done }

    /// Takes `bytes` from the connection, handing each run of the body's bytes to `body`, and
    /// returns how many of `bytes` it took: all of them, or those up to the body's end (what
    /// follows it is not the body's).
    /// - Throws: `Failure`; the decoder takes nothing more after one.
    public mutating func feed(
        _ bytes: UnsafeRawBufferPointer, body: (UnsafeRawBufferPointer) -> Void
    ) throws(Failure) -> Int {
        var index = 0
        do throws(Failure) {
            while index < bytes.count {
                switch state {
                case .done, .failed:
                    return index
                case .size(var line):
                    let byte = bytes[index]
                    index += 1
                    if byte == .lineFeed {
                        try sizeLineEnded(line)
                    } else {
                        line.append(byte)
                        guard line.count < limits.sizeLineBytes else { throw Failure.lineTooLong }
                        state = .size(line)
                    }
                case .data(let left):
                    let count = Int(min(left, Int64(bytes.count - index)))
                    body(UnsafeRawBufferPointer(rebasing: bytes[index..<index + count]))
                    index += count
                    bodyBytes += Int64(count)
                    state = left == Int64(count) ? .dataEnd(sawReturn: false) : .data(left - Int64(count))
                case .dataEnd(let sawReturn):
                    let byte = bytes[index]
                    index += 1
                    if byte == .lineFeed {
                        state = .size([])
                    } else if byte == .carriageReturn && !sawReturn {
                        state = .dataEnd(sawReturn: true)
                    } else {
                        throw Failure.malformed("a chunk's bytes are not followed by a line end")
                    }
                case .trailer(let line, let section):
                    let byte = bytes[index]
                    index += 1
                    guard section + 1 <= limits.trailerBytes else { throw Failure.lineTooLong }
                    if byte == .lineFeed {
                        // An empty line (or one holding only its CR) ends the section.
                        state = line == 0 ? .done : .trailer(line: 0, section: section + 1)
                    } else if byte == .carriageReturn && line == 0 {
                        state = .trailer(line: 0, section: section + 1)
                    } else {
                        state = .trailer(line: line + 1, section: section + 1)
                    }
                }
            }
            return index
        } catch {
            state = .failed
            throw error
        }
    }

    /// `feed(_:body:)` for bytes held in an array.
    public mutating func feed(_ bytes: [UInt8], body: (UnsafeRawBufferPointer) -> Void) throws(Failure) -> Int {
        var outcome = Result<Int, Failure>.success(0)
        bytes.withUnsafeBytes { raw in
            outcome = Result { () throws(Failure) -> Int in try feed(raw, body: body) }
        }
        return try outcome.get()
    }

    /// A chunk-size line came whole (`line`, its LF left out): the size in hex, then nothing but
    /// whitespace and extensions (`;name=value`), which are ignored.
    private mutating func sizeLineEnded(_ line: [UInt8]) throws(Failure) {
        let text = line.last == .carriageReturn ? line.dropLast() : line[...]
        let digits = text.prefix { $0.hexValue != nil }
        let rest = text.dropFirst(digits.count).drop { $0 == .space || $0 == .tab }
        guard !digits.isEmpty, rest.isEmpty || rest.first == .semicolon else {
            throw .malformed("a chunk-size line is not a size in hex")
        }
        // 15 hex digits hold any size an Int64 does not overflow on; more is no size anyone sends.
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        guard significant.count <= 15 else { throw .tooLarge(limits.bodyBytes) }
        let size = significant.reduce(Int64(0)) { $0 << 4 | Int64($1.hexValue ?? 0) }
        guard size <= limits.bodyBytes - bodyBytes else { throw .tooLarge(limits.bodyBytes) }
        state = size == 0 ? .trailer(line: 0, section: 0) : .data(size)
    }
}

extension UInt8 {
    static let semicolon: UInt8 = 0x3B
}
