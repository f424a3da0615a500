/// The shape Nearby Connections' `OfflineFrame` and Nearby Sharing's `Frame` share: a version (1)
/// and a `V1Frame` holding a type and, in the field whose number is the type's plus one, that
/// type's body.
struct VersionedFrame {
    let type: Int32
    /// The body of the type's field; empty when there is none.
    let body: ArraySlice<UInt8>

    /// Reads the V1 frame of `bytes`; `what` names the frame in the error.
    init(protobuf bytes: ArraySlice<UInt8>, what: String) throws(ProtobufError) {
        var frame: ArraySlice<UInt8>?
        var reader = ProtobufReader(bytes)
        while let field = try reader.field() {
            if field.number == 2 { frame = try field.byteView() }
        }
        guard let frame else { throw ProtobufError("\(what) has no V1 frame") }
        var type: Int32 = 0
        var bodies: [Int: ArraySlice<UInt8>] = [:]
        reader = ProtobufReader(frame)
        while let field = try reader.field() {
            if field.number == 1 {
                type = try field.int32()
            } else if case .bytes(let body) = field.value {
                bodies[field.number] = body
            }
        }
        self.type = type
        body = bodies[Int(type) + 1] ?? []
    }

    /// Writes a frame of `type` whose body is `body` (none when nil).
    static func write(type: Int32, body: [UInt8]?, to writer: inout ProtobufWriter) {
        var frame = ProtobufWriter()
        frame.int32(1, type)
        if let body { frame.bytes(Int(type) + 1, body) }
        writer.int32(1, 1)
        writer.bytes(2, frame.bytes)
    }
}
