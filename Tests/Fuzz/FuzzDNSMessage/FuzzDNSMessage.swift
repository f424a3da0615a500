import CFuzzDriver
import Glibc
import HexDNS

/// One input, as an mDNS datagram. A message that is read must write back to bytes that read as
/// the same message (`abort` if not): the reader and the writer agree on every record kind.
func fuzzDNSMessage(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    guard let message = try? DNSMessage.decode(bytes) else { return 0 }
    guard let written = try? message.encoded() else { return 0 }
    guard let again = try? DNSMessage.decode(written), again == message else { abort() }
    return 0
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzDNSMessage` once per input.
@_cdecl("FuzzDNSMessage_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzDNSMessage(data, count) }
}
