/// The `jmObject` of an envelope, interpreted according to its `jmObjectType`.
public enum JMObject: Sendable, Hashable {
    /// A HexJM (`jmObjectType` is `Hex`).
    case hex(HexJM)
    /// An object of a type hexd does not know, kept as received (compacted) so it can be shown or
    /// forwarded without being interpreted.
    case opaque(RawJSON)

    /// The HexJM, if this object is one.
    public var hex: HexJM? {
        if case .hex(let hex) = self { return hex }
        return nil
    }
}
