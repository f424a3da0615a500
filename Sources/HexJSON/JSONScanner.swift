/// A cursor over the bytes of one JSON text (RFC 8259), read in a single pass.
///
/// Callers pull values in document order: `readObject` and `readArray` walk containers member by
/// member, `readString`, `readNumber`, `readBool` and `readNull` take scalars, and `skipValue`
/// validates and steps over anything the caller does not need. Nothing is built that the caller
/// does not ask for, so reading costs time in proportion to the input and memory in proportion
/// to what is kept.
///
/// It is total: every input ends in a value or a `JSONError`, never a trap. Nesting is counted
/// against `limits.maximumDepth` without recursion, so depth cannot exhaust a thread's stack.
///
/// A scanner borrows its bytes: it exists only inside `scan(_:limits:_:)`.
public struct JSONScanner {
    /// The text being read.
    public let bytes: UnsafeBufferPointer<UInt8>
    public let limits: JSONLimits
    /// The offset of the next byte to read.
    public private(set) var position = 0
    /// How many containers enclose the position.
    public private(set) var depth = 0
    /// Whether each container `skipValue` is inside is an object; kept so repeated skips do not
    /// allocate.
    private var skipStack: [Bool] = []

    private init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Runs `body` with a scanner over `input`. The scanner must not escape `body`.
    public static func scan<T>(
        _ input: some Collection<UInt8>, limits: JSONLimits = .default,
        _ body: (inout JSONScanner) throws(JSONError) -> T
    ) throws(JSONError) -> T {
        let result =
            input.withContiguousStorageIfAvailable { buffer in
                var scanner = JSONScanner(bytes: buffer, limits: limits)
                return Result { () throws(JSONError) -> T in try body(&scanner) }
            }
            ?? Array(input).withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(bytes: buffer, limits: limits)
                return Result { () throws(JSONError) -> T in try body(&scanner) }
            }
        return try result.get()
    }

    // MARK: Looking ahead

    /// The kind of the next value, after skipping white space.
    public mutating func peekKind() throws(JSONError) -> JSONKind {
        skipWhitespace()
        guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
        switch bytes[position] {
        case Byte.openBrace: return .object
        case Byte.openBracket: return .array
        case Byte.quote: return .string
        case Byte.minus, Byte.zero...Byte.nine: return .number
        case Byte.t, Byte.f: return .bool
        case Byte.n: return .null
        default: throw JSONError(.unexpectedCharacter, at: position)
        }
    }

    /// Succeeds when only white space is left.
    public mutating func expectEnd() throws(JSONError) {
        skipWhitespace()
        guard position == bytes.count else { throw JSONError(.trailingCharacters, at: position) }
    }

    // MARK: Containers

    /// Reads an object, calling `body` with each member's key; `body` must read or skip exactly
    /// the member's value.
    public mutating func readObject(_ body: (inout JSONScanner, JSONStringToken) throws(JSONError) -> Void)
        throws(JSONError)
    {
        try enterContainer(Byte.openBrace)
        skipWhitespace()
        if try consumeIf(Byte.closeBrace) {
            depth -= 1
            return
        }
        while true {
            skipWhitespace()
            let key = try readStringToken()
            skipWhitespace()
            try expect(Byte.colon)
            try body(&self, key)
            skipWhitespace()
            if try consumeIf(Byte.comma) { continue }
            try expect(Byte.closeBrace)
            depth -= 1
            return
        }
    }

    /// Reads an array, calling `body` once per element; `body` must read or skip the element.
    public mutating func readArray(_ body: (inout JSONScanner) throws(JSONError) -> Void) throws(JSONError) {
        try enterContainer(Byte.openBracket)
        skipWhitespace()
        if try consumeIf(Byte.closeBracket) {
            depth -= 1
            return
        }
        while true {
            try body(&self)
            skipWhitespace()
            if try consumeIf(Byte.comma) { continue }
            try expect(Byte.closeBracket)
            depth -= 1
            return
        }
    }

    // MARK: Scalars

    /// Reads a string, returning where its contents are; `string(_:)` decodes them.
    public mutating func readStringToken() throws(JSONError) -> JSONStringToken {
        skipWhitespace()
        try expect(Byte.quote)
        let start = position
        var hasEscapes = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == Byte.quote {
                defer { position += 1 }
                return JSONStringToken(start: start, end: position, hasEscapes: hasEscapes)
            }
            if byte == Byte.backslash {
                hasEscapes = true
                try skipEscape()
                continue
            }
            guard byte >= 0x20 else { throw JSONError(.controlCharacterInString, at: position) }
            position += 1
        }
        throw JSONError(.unexpectedEnd, at: position)
    }

    /// Reads a string and decodes it; nil when its contents are not valid Unicode (bytes that are
    /// not UTF-8, or an unpaired surrogate escape), which is still valid JSON syntax.
    public mutating func readString() throws(JSONError) -> String? {
        string(try readStringToken())
    }

    /// Reads a number, keeping its literal text so no precision is lost before the caller picks a type.
    public mutating func readNumber() throws(JSONError) -> JSONNumber {
        skipWhitespace()
        let start = position
        try skipNumber()
        let literal = UnsafeBufferPointer(rebasing: bytes[start..<position])
        let isInteger = !literal.contains { $0 == Byte.dot || $0 | 0x20 == Byte.e }
        return JSONNumber(validatedText: String(decoding: literal, as: UTF8.self), isInteger: isInteger)
    }

    /// Reads `true` or `false`.
    public mutating func readBool() throws(JSONError) -> Bool {
        skipWhitespace()
        if try consumeLiteral(Literal.true) { return true }
        if try consumeLiteral(Literal.false) { return false }
        throw JSONError(.unexpectedCharacter, at: position)
    }

    /// Reads `null`.
    public mutating func readNull() throws(JSONError) {
        skipWhitespace()
        guard try consumeLiteral(Literal.null) else { throw JSONError(.unexpectedCharacter, at: position) }
    }

    // MARK: Skipping

    /// Validates the next value and steps over it, however deep (within the depth limit).
    /// - Returns: the offsets the value occupies.
    @discardableResult
    public mutating func skipValue() throws(JSONError) -> Range<Int> {
        skipWhitespace()
        let start = position
        let baseDepth = depth
        skipStack.removeAll(keepingCapacity: true)
        var expectingValue = true
        while true {
            if expectingValue {
                skipWhitespace()
                guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
                switch bytes[position] {
                case Byte.openBrace, Byte.openBracket:
                    let isObject = bytes[position] == Byte.openBrace
                    try enterContainer(bytes[position])
                    skipStack.append(isObject)
                    skipWhitespace()
                    if try consumeIf(isObject ? Byte.closeBrace : Byte.closeBracket) {
                        depth -= 1
                        skipStack.removeLast()
                    } else {
                        if isObject { try skipKeyAndColon() }
                        continue
                    }
                case Byte.quote: _ = try readStringToken()
                case Byte.minus, Byte.zero...Byte.nine: try skipNumber()
                case Byte.t, Byte.f: _ = try readBool()
                case Byte.n: try readNull()
                default: throw JSONError(.unexpectedCharacter, at: position)
                }
                expectingValue = false
            }
            // After a value: done, or a separator, or the end of the enclosing container.
            guard let inObject = skipStack.last, depth > baseDepth else { return start..<position }
            skipWhitespace()
            guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
            switch bytes[position] {
            case Byte.comma:
                position += 1
                if inObject { try skipKeyAndColon() }
                expectingValue = true
            case Byte.closeBrace where inObject, Byte.closeBracket where !inObject:
                position += 1
                depth -= 1
                skipStack.removeLast()
            default:
                throw JSONError(.unexpectedCharacter, at: position)
            }
        }
    }

    // MARK: Decoding tokens

    /// The decoded contents of a string token; nil when they are not valid Unicode.
    public func string(_ token: JSONStringToken) -> String? {
        if !token.hasEscapes {
            let text = UnsafeBufferPointer(rebasing: bytes[token.start..<token.end])
            // ASCII is UTF-8 as it is: the generic validation costs more than the rest of a link.
            return Self.isASCII(text) ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
        }
        guard let decoded = unescapedBytes(token) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        return high < 0x80
    }

    /// The bytes a string token stands for, escapes resolved; nil for an unpaired surrogate escape.
    /// (The bytes are not checked to be UTF-8.)
    public func unescapedBytes(_ token: JSONStringToken) -> [UInt8]? {
        guard token.hasEscapes else { return Array(bytes[token.start..<token.end]) }
        var output: [UInt8] = []
        output.reserveCapacity(token.end - token.start)
        var index = token.start
        while index < token.end {
            let byte = bytes[index]
            guard byte == Byte.backslash else {
                output.append(byte)
                index += 1
                continue
            }
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case Byte.b: output.append(0x08)
            case Byte.f: output.append(0x0C)
            case Byte.n: output.append(0x0A)
            case Byte.r: output.append(0x0D)
            case Byte.t: output.append(0x09)
            case Byte.u:
                let unit = hexValue(at: index)
                index += 4
                var scalarValue = unit
                if (0xD800...0xDBFF).contains(unit) {
                    // A high surrogate must be followed by an escaped low one.
                    guard index + 6 <= token.end, bytes[index] == Byte.backslash, bytes[index + 1] == Byte.u else {
                        return nil
                    }
                    let low = hexValue(at: index + 2)
                    guard (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalarValue = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return nil
                }
                guard let scalar = Unicode.Scalar(scalarValue) else { return nil }
                output.append(contentsOf: UTF8.encode(scalar).map { Array($0) } ?? [])
            default: output.append(escape)  // `"`, `\` and `/` stand for themselves
            }
        }
        return output
    }

    /// Whether a key token is exactly `name` (escapes resolved).
    public func token(_ token: JSONStringToken, is name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        if !token.hasEscapes {
            guard token.end - token.start == count else { return false }
            let name = UnsafeBufferPointer(start: name.utf8Start, count: count)
            return bytes[token.start..<token.end].elementsEqual(name)
        }
        return unescapedBytes(token)?.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: count)) ?? false
    }

    /// The bytes of a validated range of this text without the white space between tokens:
    /// compact JSON, which never holds a raw newline.
    public func compactBytes(_ range: Range<Int>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var inString = false
        var escaped = false
        for byte in bytes[range] {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == Byte.backslash {
                    escaped = true
                } else if byte == Byte.quote {
                    inString = false
                }
            } else if Byte.isWhitespace(byte) {
                continue
            } else if byte == Byte.quote {
                inString = true
            }
            output.append(byte)
        }
        return output
    }

    // MARK: Private

    private mutating func skipWhitespace() {
        while position < bytes.count, Byte.isWhitespace(bytes[position]) { position += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(JSONError) {
        guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
        guard bytes[position] == byte else { throw JSONError(.unexpectedCharacter, at: position) }
        position += 1
    }

    /// Consumes `byte` when it is next; throws only at the end of the text.
    private mutating func consumeIf(_ byte: UInt8) throws(JSONError) -> Bool {
        guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
        guard bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func enterContainer(_ opening: UInt8) throws(JSONError) {
        skipWhitespace()
        guard depth < limits.maximumDepth else { throw JSONError(.tooDeep, at: position) }
        try expect(opening)
        depth += 1
    }

    private mutating func skipKeyAndColon() throws(JSONError) {
        skipWhitespace()
        _ = try readStringToken()
        skipWhitespace()
        try expect(Byte.colon)
    }

    /// Steps over one escape sequence (the position is at its backslash), checking its form.
    private mutating func skipEscape() throws(JSONError) {
        position += 1
        guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
        switch bytes[position] {
        case Byte.quote, Byte.backslash, Byte.slash, Byte.b, Byte.f, Byte.n, Byte.r, Byte.t:
            position += 1
        case Byte.u:
            guard position + 4 < bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
            for offset in 1...4 where Byte.hexDigitValue(bytes[position + offset]) == nil {
                throw JSONError(.invalidEscape, at: position + offset)
            }
            position += 5
        default:
            throw JSONError(.invalidEscape, at: position)
        }
    }

    /// The value of four hex digits known to be valid (checked by `skipEscape`).
    private func hexValue(at index: Int) -> UInt32 {
        (index..<index + 4).reduce(0) { $0 << 4 | UInt32(Byte.hexDigitValue(bytes[$1]) ?? 0) }
    }

    /// Steps over digits; returns how many.
    private mutating func skipDigits() throws(JSONError) -> Int {
        let start = position
        while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) { position += 1 }
        return position - start
    }

    /// Steps over a number, checking it against JSON's grammar:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func skipNumber() throws(JSONError) {
        _ = try consumeIf(Byte.minus)
        guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
        if bytes[position] == Byte.zero {
            position += 1
        } else {
            guard try skipDigits() > 0 else { throw JSONError(.invalidNumber, at: position) }
        }
        if position < bytes.count, bytes[position] == Byte.dot {
            position += 1
            guard try skipDigits() > 0 else { throw JSONError(.invalidNumber, at: position) }
        }
        if position < bytes.count, bytes[position] | 0x20 == Byte.e {
            position += 1
            if position < bytes.count, bytes[position] == Byte.plus || bytes[position] == Byte.minus { position += 1 }
            guard try skipDigits() > 0 else { throw JSONError(.invalidNumber, at: position) }
        }
    }

    private mutating func consumeLiteral(_ literal: [UInt8]) throws(JSONError) -> Bool {
        guard position + literal.count <= bytes.count else {
            if bytes[position...].elementsEqual(literal.prefix(bytes.count - position)) {
                throw JSONError(.unexpectedEnd, at: bytes.count)
            }
            return false
        }
        guard bytes[position..<position + literal.count].elementsEqual(literal) else { return false }
        position += literal.count
        return true
    }

    private enum Literal {
        static let `true` = Array("true".utf8)
        static let `false` = Array("false".utf8)
        static let null = Array("null".utf8)
    }
}

/// What kind of value comes next.
public enum JSONKind: Sendable, Hashable {
    case object, array, string, number, bool, null
}

/// Where a string's contents are in the text, between its quotes.
public struct JSONStringToken: Sendable, Hashable {
    public let start: Int
    public let end: Int
    /// Whether the contents hold a backslash escape (and so are not the bytes as they stand).
    public let hasEscapes: Bool

    /// The length of the contents as written (escapes count as written).
    public var encodedLength: Int { end - start }
}
