import CFuzzDriver
import HexControl

/// One input, as a line on the control socket. Any trap is a finding.
func fuzzControlRequest(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    _ = try? ControlCoding.decode(ControlRequest.self, from: bytes)
    _ = try? ControlCoding.decode(ControlResponse.self, from: bytes)
    return 0
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzControlRequest` once per input.
@_cdecl("FuzzControlRequest_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzControlRequest(data, count) }
}
