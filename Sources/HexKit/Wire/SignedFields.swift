/// The bytes a hexd signature covers, made from text fields (Protocol.md, section 9, "Signed
/// beacons"): each field as its UTF-8 bytes after their count as two bytes, big-endian, so that no
/// two lists of fields make the same bytes.
enum SignedFields {
    /// The fields joined so; nil when one is over 65,535 bytes.
    static func message(_ fields: [String]) -> [UInt8]? {
        var message: [UInt8] = []
        for field in fields {
            let bytes = Array(field.utf8)
            guard bytes.count <= Int(UInt16.max) else { return nil }
            message += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        }
        return message
    }
}
