import CFuzzDriver
import Glibc
import HexKit
import KDEConnectCore

/// One input, as a KDE Connect packet line: an identity (from a datagram and from a TCP
/// connection), a share or a pairing packet. Whatever is read must keep every field within its
/// bounds and read back the same after being written (`abort` if not).
func fuzzKDEConnect(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    guard let packet = try? KDEConnectPacket.decode(bytes) else { return 0 }
    for broadcast in [true, false] {
        guard let identity = try? KDEConnectIdentity(packet, broadcast: broadcast) else { continue }
        guard KDEConnectIdentity.isValidDeviceID(identity.deviceID), !identity.name.isEmpty,
            identity.name.count <= KDEConnectIdentity.maximumNameCharacters,
            identity.name.utf8.count <= KDEConnectIdentity.maximumNameBytes,
            identity.incomingCapabilities.count <= 128, identity.outgoingCapabilities.count <= 128,
            !broadcast || identity.tcpPort.map(KDEConnectIdentity.tcpPorts.contains) == true,
            let again = try? KDEConnectIdentity(
                KDEConnectPacket.decode(identity.encoded(id: 1).dropLast()), broadcast: broadcast),
            again == identity
        else { abort() }
    }
    if let share = try? KDEConnectShare(packet) {
        switch share {
        case .url(let url): guard url.utf8.count <= KDEConnectShare.maximumURLBytes else { abort() }
        case .text(let text): guard text.utf8.count <= KDEConnectShare.maximumTextBytes else { abort() }
        case .file(let file):
            guard file.name.utf8.count <= KDEConnectSharedFile.maximumNameBytes, file.size >= 0,
                file.size == 0 || file.port != nil
            else { abort() }
        }
        guard (try? KDEConnectShare(KDEConnectPacket.decode(share.encoded(id: 1).dropLast()))) == share else {
            abort()
        }
    }
    if let pair = KDEConnectPair(packet) {
        guard (try? KDEConnectPacket.decode(pair.encoded(id: 1).dropLast())).flatMap(KDEConnectPair.init) == pair
        else { abort() }
    }
    return 0
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzKDEConnect` once per input.
@_cdecl("FuzzKDEConnect_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzKDEConnect(data, count) }
}
