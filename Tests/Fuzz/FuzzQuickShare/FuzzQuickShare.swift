import CFuzzDriver
import Glibc
import QuickShareCore

/// Keys both ends of the fuzzed channel derive from fixed keys, so inputs can reach past the
/// signature check only by carrying a valid one (the seeds do).
private let channelKeys = UKEY2Keys(sharedSecret: [UInt8](repeating: 7, count: 32), clientInit: [1], serverInit: [2])

/// A receiver past the handshake and the phone's channel to it, made once from fixed keys: each
/// input that drives the receiver starts from copies of them.
private let afterHandshake: (receiver: InboundConnection, channel: SecureChannel)? = {
    guard let phoneKey = try? P256KeyPair(privateScalar: [UInt8](repeating: 6, count: 32)),
        let hexdKey = try? P256KeyPair(privateScalar: [UInt8](repeating: 3, count: 32))
    else { return nil }
    var receiver = InboundConnection(keyPair: hexdKey, random: [UInt8](repeating: 4, count: 32))
    var phone = UKEY2Client(keyPair: phoneKey, random: [UInt8](repeating: 5, count: 32))
    let info = EndpointInfo(deviceType: .phone, name: "Fuzz", random: [UInt8](repeating: 0, count: 16))
    _ = receiver.receive(OfflineFrame.connectionRequest(.init(endpointID: "FUZZ", endpointInfo: info.bytes)).protobuf)
    guard case .send(let serverInit)? = receiver.receive(phone.clientInit).first,
        let (finish, keys) = try? phone.finish(answering: serverInit)
    else { return nil }
    _ = receiver.receive(finish)
    _ = receiver.receive(OfflineFrame.connectionResponse(.init(accepted: true)).protobuf)
    return (receiver, SecureChannel(keys: keys.channelKeys(as: .client)))
}()

/// One input: its first byte picks what reads the rest, as a peer's bytes would reach it. Frames
/// that are read must write bytes that read back to the same bytes again (`abort` if not).
func fuzzQuickShare(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    guard let selector = input.first else { return 0 }
    let bytes = Array(input.dropFirst())
    switch selector % 7 {
    case 0:
        if let frame = try? OfflineFrame(protobuf: bytes) { checkFixpoint(frame) }
    case 1:
        if let frame = try? SharingFrame(protobuf: bytes) { checkFixpoint(frame) }
    case 2:
        guard let keyPair = try? P256KeyPair(privateScalar: [UInt8](repeating: 3, count: 32)) else { abort() }
        var server = UKEY2Server(keyPair: keyPair, random: [UInt8](repeating: 4, count: 32))
        let frames = bytes.split(separator: 0xFF, maxSplits: 1).map(Array.init)
        if (try? server.serverInit(answering: frames.first ?? [])) != nil, frames.count > 1 {
            _ = try? server.keys(finishing: frames[1])
        }
    case 3:
        var channel = SecureChannel(keys: channelKeys.channelKeys(as: .server))
        _ = try? channel.open(bytes)
    case 4:
        _ = EndpointInfo(bytes)
        _ = Base64URL.decode(String(decoding: bytes, as: UTF8.self))
        _ = QuickShareService.endpointID(ofInstance: String(decoding: bytes, as: UTF8.self))
    case 5:
        // The rest as offline frames, each after its 2-byte length, that the phone seals: the
        // receiver's machine past the handshake, answered "yes" once it asks.
        guard var (receiver, channel) = afterHandshake else { abort() }
        var rest = bytes[...]
        while rest.count >= 2 {
            let length = Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1])
            let frame = Array(rest.dropFirst(2).prefix(length))
            rest = rest.dropFirst(2 + length)
            guard let sealed = try? channel.seal(frame) else { abort() }
            for action in receiver.receive(sealed) {
                if case .ask = action { _ = receiver.answer(accept: true) }
            }
        }
    default:
        if let key = try? GenericPublicKey(protobuf: bytes),
            let keyPair = try? P256KeyPair(privateScalar: [UInt8](repeating: 5, count: 32))
        {
            _ = try? keyPair.sharedSecret(peerX: key.x, peerY: key.y)
        }
    }
    return 0
}

private func checkFixpoint<Frame: ProtobufEncodable & ProtobufDecodable>(_ frame: Frame) {
    let written = frame.protobuf
    guard let again = try? Frame(protobuf: written), again.protobuf == written else { abort() }
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzQuickShare` once per input.
@_cdecl("FuzzQuickShare_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzQuickShare(data, count) }
}
