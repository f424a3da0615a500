import CFuzzDriver
import Glibc
import HexKit

/// One input, as a discovery datagram. A beacon that is read must keep
/// every field within its bounds and read back the same after being written (`abort` if not).
func fuzzBeacon(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    guard let beacon = Beacon.decode(bytes) else { return 0 }
    guard Beacon.intervalRange.contains(beacon.interval), beacon.name.utf8.count <= Beacon.maximumNameBytes,
        beacon.versionID.utf8.count <= Beacon.maximumVersionBytes,
        beacon.capabilities.count <= Beacon.maximumCapabilities,
        Beacon.decode(beacon.encoded()) == beacon
    else { abort() }
    _ = Duration.seconds(beacon.interval) * 3
    return 0
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzBeacon` once per input.
@_cdecl("FuzzBeacon_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzBeacon(data, count) }
}
