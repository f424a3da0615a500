/// Nearby Connections' frames (`offline_wire_formats.proto`): the connection request and response,
/// payload transfers, keep-alives and the goodbye. Frame types hexd has no use for (bandwidth
/// upgrades, auto-resume) are read as `other` and ignored, as stock receivers never offer them.
public enum OfflineFrame: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    case connectionRequest(ConnectionRequest)
    case connectionResponse(ConnectionResponse)
    case payloadTransfer(PayloadTransfer)
    case keepAlive(KeepAlive)
    case disconnection(Disconnection)
    case other(type: Int32)

    /// `V1Frame.FrameType`'s values, which are also the numbers of the fields holding each frame.
    private enum FrameType: Int32 {
        case connectionRequest = 1
        case connectionResponse = 2
        case payloadTransfer = 3
        case keepAlive = 5
        case disconnection = 6
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        let frame = try VersionedFrame(protobuf: bytes, what: "an offline frame")
        guard let known = FrameType(rawValue: frame.type) else {
            self = .other(type: frame.type)
            return
        }
        let body = frame.body
        switch known {
        case .connectionRequest: self = .connectionRequest(try ConnectionRequest(protobuf: body))
        case .connectionResponse: self = .connectionResponse(try ConnectionResponse(protobuf: body))
        case .payloadTransfer: self = .payloadTransfer(try PayloadTransfer(protobuf: body))
        case .keepAlive: self = .keepAlive(try KeepAlive(protobuf: body))
        case .disconnection: self = .disconnection(try Disconnection(protobuf: body))
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        let (type, body): (Int32, (any ProtobufEncodable)?) =
            switch self {
            case .connectionRequest(let request): (FrameType.connectionRequest.rawValue, request)
            case .connectionResponse(let response): (FrameType.connectionResponse.rawValue, response)
            case .payloadTransfer(let transfer): (FrameType.payloadTransfer.rawValue, transfer)
            case .keepAlive(let keepAlive): (FrameType.keepAlive.rawValue, keepAlive)
            case .disconnection(let disconnection): (FrameType.disconnection.rawValue, disconnection)
            case .other(let type): (type, nil)
            }
        VersionedFrame.write(type: type, body: body?.protobuf, to: &writer)
    }

    /// The client's opening frame: who it is (a 4-character endpoint ID and the endpoint info of
    /// `EndpointInfo`) and, as Android 14 wants to see, the medium and its keep-alive timing.
    public struct ConnectionRequest: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
        /// `Medium.WIFI_LAN`.
        public static let wifiLAN: UInt64 = 5
        static let maximumMediums = 16

        public var endpointID: String
        /// The device's name, which Android writes beside the endpoint info.
        public var endpointName: String?
        public var endpointInfo: [UInt8]
        public var mediums: [UInt64]
        public var keepAliveIntervalMillis: Int32?
        public var keepAliveTimeoutMillis: Int32?

        public init(
            endpointID: String, endpointName: String? = nil, endpointInfo: [UInt8], mediums: [UInt64] = [Self.wifiLAN],
            keepAliveIntervalMillis: Int32? = nil, keepAliveTimeoutMillis: Int32? = nil
        ) {
            self.endpointID = endpointID
            self.endpointName = endpointName
            self.endpointInfo = endpointInfo
            self.mediums = mediums
            self.keepAliveIntervalMillis = keepAliveIntervalMillis
            self.keepAliveTimeoutMillis = keepAliveTimeoutMillis
        }

        public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
            self.init(endpointID: "", endpointInfo: [], mediums: [])
            try Self.forEachField(in: bytes) { field throws(ProtobufError) in
                switch field.number {
                case 1: endpointID = try field.string()
                case 2: endpointName = try field.string()
                case 5:
                    mediums += try field.packedVarints(atMost: Self.maximumMediums)
                    guard mediums.count <= Self.maximumMediums else { throw ProtobufError("too many mediums") }
                case 6: endpointInfo = try field.bytes()
                case 8: keepAliveIntervalMillis = try field.int32()
                case 9: keepAliveTimeoutMillis = try field.int32()
                default: break
                }
            }
        }

        public func encode(to writer: inout ProtobufWriter) {
            writer.string(1, endpointID)
            if let endpointName { writer.string(2, endpointName) }
            // Unpacked, as proto2 writes a repeated enum without [packed = true].
            for medium in mediums { writer.uint64(5, medium) }
            writer.bytes(6, endpointInfo)
            if let keepAliveIntervalMillis { writer.int32(8, keepAliveIntervalMillis) }
            if let keepAliveTimeoutMillis { writer.int32(9, keepAliveTimeoutMillis) }
        }
    }

    /// Each side's answer to the connection, sent in clear after UKEY2.
    public struct ConnectionResponse: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
        /// `OsInfo.OsType.LINUX`.
        public static let linux: Int32 = 100

        public var accepted: Bool
        public var osType: Int32?
        /// Samsung's One UI 7 and 8 want these (rquickshare `inbound.rs`, NearDrop issue #186).
        public var safeToDisconnectVersion: Int32?
        public var multiplexSocketBitmask: Int32?

        public init(
            accepted: Bool, osType: Int32? = Self.linux, safeToDisconnectVersion: Int32? = 1,
            multiplexSocketBitmask: Int32? = 0
        ) {
            self.accepted = accepted
            self.osType = osType
            self.safeToDisconnectVersion = safeToDisconnectVersion
            self.multiplexSocketBitmask = multiplexSocketBitmask
        }

        public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
            self.init(accepted: false, osType: nil, safeToDisconnectVersion: nil, multiplexSocketBitmask: nil)
            try Self.forEachField(in: bytes) { field throws(ProtobufError) in
                switch field.number {
                case 3: accepted = try field.int32() == 1
                case 4:
                    var reader = ProtobufReader(try field.byteView())
                    while let os = try reader.field() {
                        if os.number == 1 { osType = try os.int32() }
                    }
                case 5: multiplexSocketBitmask = try field.int32()
                case 7: safeToDisconnectVersion = try field.int32()
                default: break
                }
            }
        }

        public func encode(to writer: inout ProtobufWriter) {
            // The deprecated status, which NearDrop and Android still write: 0 is "ok".
            writer.int32(1, accepted ? 0 : 1)
            writer.int32(3, accepted ? 1 : 2)
            if let osType {
                var os = ProtobufWriter()
                os.int32(1, osType)
                writer.bytes(4, os.bytes)
            }
            if let multiplexSocketBitmask { writer.int32(5, multiplexSocketBitmask) }
            if let safeToDisconnectVersion { writer.int32(7, safeToDisconnectVersion) }
        }
    }

    /// `KeepAliveFrame`: sent about every ten seconds by each side, or the other gives up.
    public struct KeepAlive: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
        public var ack: Bool

        public init(ack: Bool) {
            self.ack = ack
        }

        public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
            ack = false
            try Self.forEachField(in: bytes) { field throws(ProtobufError) in
                if field.number == 1 { ack = try field.bool() }
            }
        }

        public func encode(to writer: inout ProtobufWriter) {
            writer.bool(1, ack)
        }
    }

    /// `DisconnectionFrame`: the goodbye, optionally asking (or granting) a "safe to disconnect".
    public struct Disconnection: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
        public var requestSafeToDisconnect: Bool
        public var ackSafeToDisconnect: Bool

        public init(requestSafeToDisconnect: Bool = false, ackSafeToDisconnect: Bool = false) {
            self.requestSafeToDisconnect = requestSafeToDisconnect
            self.ackSafeToDisconnect = ackSafeToDisconnect
        }

        public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
            self.init()
            try Self.forEachField(in: bytes) { field throws(ProtobufError) in
                switch field.number {
                case 1: requestSafeToDisconnect = try field.bool()
                case 2: ackSafeToDisconnect = try field.bool()
                default: break
                }
            }
        }

        public func encode(to writer: inout ProtobufWriter) {
            if requestSafeToDisconnect { writer.bool(1, true) }
            if ackSafeToDisconnect { writer.bool(2, true) }
        }
    }
}
