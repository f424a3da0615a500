// The tolerance rules of the wire format live here, in one place: every model decodes its fields
// through these helpers, so "wrong type means missing" and "a number becomes a string" hold the
// same way at every level.

extension KeyedDecodingContainer {
    /// The string at `key`, or nil when the key is missing, null or of a type that is not a string.
    ///
    /// A JSON number is accepted and becomes its decimal text (the original app's parser did the
    /// same): integers that fit in 64 bits print without a fraction, others as a Double prints.
    func lenientString(forKey key: Key) -> String? {
        // One lookup for the common cases (a string, missing, null); the rest only on a mismatch.
        do {
            return try decodeIfPresent(String.self, forKey: key)
        } catch {
            if let integer = try? decode(Int64.self, forKey: key) { return String(integer) }
            if let number = try? decode(Double.self, forKey: key), number.isFinite { return String(number) }
            return nil
        }
    }

    /// The value at `key` decoded as `T`, or nil when it is missing, null or does not decode.
    func lenient<T: Decodable>(_ type: T.Type, forKey key: Key) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }

    /// The array at `key` keeping only the elements that decode as `T`; nil when the key is
    /// missing, null or not an array.
    func lenientArray<T: Decodable>(of type: T.Type, forKey key: Key) -> [T]? {
        lenient([Lenient<T>].self, forKey: key)?.compactMap(\.value)
    }
}

/// One array element that decodes as `T` or is dropped. Decoding it never throws, so the array
/// around it moves on to the next element instead of failing whole.
struct Lenient<T: Decodable>: Decodable {
    let value: T?

    init(from decoder: any Decoder) throws {
        value = try? T(from: decoder)
    }
}
