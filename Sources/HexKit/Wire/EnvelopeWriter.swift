import HexJSON

extension Envelope {
    /// The envelope as compact UTF-8 JSON on one line, without the line ending: keys sorted (so
    /// the same envelope is always the same bytes), unset optional keys left out, `/` written as
    /// `\/` as the original app did. Strings escape their control characters, so the result never
    /// holds a raw newline.
    public func encodedLine() -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.member("hexID", hexID)
        switch jmObject {
        case .hex(let hex):
            writer.key("jmObject")
            hex.write(to: &writer)
        case .opaque(let raw):
            writer.key("jmObject")
            writer.raw(raw.bytes)
        case nil: break
        }
        writer.member("jmObjectType", jmObjectType?.rawValue)
        writer.member("message", message)
        writer.member("messageID", messageID)
        writer.member("operationType", operationType.rawValue)
        writer.member("status", status?.rawValue)
        writer.member("versionID", versionID)
        writer.endObject()
        return writer.bytes
    }
}

extension HexJM {
    /// Keys sorted; fields that are nil are left out, as the original app did.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("hexColor", hexColor)
        writer.member("hexDescription", hexDescription)
        if let links {
            writer.key("links")
            writer.beginArray()
            for link in links {
                writer.beginObject()
                writer.member("linkDescription", link.linkDescription)
                writer.member("service", link.service?.rawValue)
                writer.member("url", link.url)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.member("senderName", senderName)
        writer.member("senderUUID", senderUUID)
        writer.endObject()
    }
}
