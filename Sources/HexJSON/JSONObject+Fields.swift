// Typed reads of an object's members, for readers that take a tree: a member of another type
// reads as absent, so that an odd field of a peer's is a refusal or a default, never a trap.
extension JSONObject {
    /// The member `key` when it is a string; nil when it is absent or not one.
    public func string(_ key: String) -> String? {
        if case .string(let value)? = self[key] { value } else { nil }
    }

    /// The member `key` when it is `true` or `false`; nil otherwise.
    public func bool(_ key: String) -> Bool? {
        if case .bool(let value)? = self[key] { value } else { nil }
    }

    /// The member `key` when it is a number that `T` holds exactly; nil otherwise.
    public func integer<T: FixedWidthInteger>(_ key: String, as type: T.Type = T.self) -> T? {
        if case .number(let number)? = self[key] { number.integer(as: type) } else { nil }
    }

    /// The member `key` when it is an object; nil otherwise.
    public func object(_ key: String) -> JSONObject? {
        if case .object(let value)? = self[key] { value } else { nil }
    }
}
