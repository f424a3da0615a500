import CFuzzDriver
import Glibc
import HexKit
import KDEConnectCore
import LocalSendCore

/// One input, as a line from a peer. Any trap is a finding; so is an
/// envelope that does not read back the same after being written (`abort`).
func fuzzEnvelope(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count)
    guard let envelope = try? Envelope.decode(from: bytes) else { return 0 }
    guard (try? Envelope.decode(from: envelope.encodedLine())) == envelope else { abort() }
    if let hex = envelope.hex {
        _ = HexManager.makeHex(from: hex, location: .inbox, at: Date())
    }
    return 0
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzEnvelope` once per input.
@_cdecl("FuzzEnvelope_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    // The forms hexd registers, so that senders' IDs of devices of other protocols are read as hexd reads them.
    PeerIDForms.register(LocalSendID.forms + [KDEConnectID.form])
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzEnvelope(data, count) }
}
