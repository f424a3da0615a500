import CFuzzDriver
import HexDBus

/// One input, as the bytes a bus sends after authentication. Any trap is a finding, and so is a
/// message that does not read back as itself once written again.
func fuzzDBusMessage(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    var reader = DBusMessageReader(maximumBytes: 1 << 16)
    reader.append(bytes)
    while let message = try? reader.next() {
        guard let again = try? DBusMessage.decode(message.encoded()), again == message || message.hasNaN else {
            fatalError("a message that does not read back as itself: \(message)")
        }
    }
    return 0
}

extension DBusMessage {
    /// NaN is never equal to itself: such a message reads back right but compares unequal.
    var hasNaN: Bool { "\(body)".contains("nan") }
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzDBusMessage` once per input.
@_cdecl("FuzzDBusMessage_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzDBusMessage(data, count) }
}
