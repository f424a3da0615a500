import HexJSON

// Typed reads of a JSON object's members for the LocalSend readers: a member of another type
// reads as absent, so that a peer's odd field is a refusal or a default, never a trap.
extension JSONObject {
    func string(_ key: String) -> String? {
        if case .string(let value)? = self[key] { value } else { nil }
    }

    func bool(_ key: String) -> Bool? {
        if case .bool(let value)? = self[key] { value } else { nil }
    }

    func integer<T: FixedWidthInteger>(_ key: String, as type: T.Type = T.self) -> T? {
        if case .number(let number)? = self[key] { number.integer(as: type) } else { nil }
    }

    func object(_ key: String) -> JSONObject? {
        if case .object(let value)? = self[key] { value } else { nil }
    }
}

extension JSONWriter {
    /// A member whose value is `true` or `false`.
    mutating func member(_ key: String, _ value: Bool) {
        self.key(key)
        raw(Array((value ? "true" : "false").utf8))
    }

    /// A member whose value is a string, or `null` when there is none.
    mutating func member(_ key: String, orNull value: String?) {
        self.key(key)
        if let value { string(value) } else { raw(Array("null".utf8)) }
    }
}
