extension DataSendWrapper {
    /// Reads one envelope from the bytes of one line (without its line ending).
    ///
    /// - Throws: `EnvelopeDecodingError`, and only that: the bytes are not JSON, not an object, or
    ///   lack `versionID` or `operationType`. Every other shape decodes (see the tolerance rules in
    ///   Protocol.md).
    public static func decode(from bytes: some Collection<UInt8>) throws(EnvelopeDecodingError) -> Self {
        do {
            return try JSONDecoder().decode(Self.self, from: Data(bytes))
        } catch let error as EnvelopeDecodingError {
            throw error
        } catch {
            throw .malformedJSON
        }
    }

    /// The envelope as compact UTF-8 JSON on one line, without the line ending: keys sorted (so
    /// the same envelope is always the same bytes), `/` written as `\/` as the original app did.
    /// A newline inside a string is escaped by JSON, so the result never contains a raw newline.
    public func encodedLine() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Only strings, finite numbers, arrays and objects are encoded (JSONValue writes null for
        // a non-finite number), so encoding cannot fail; an empty line is what receivers skip.
        return (try? encoder.encode(self)) ?? Data()
    }
}
