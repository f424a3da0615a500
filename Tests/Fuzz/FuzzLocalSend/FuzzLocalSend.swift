import CFuzzDriver
import Glibc
import HexKit
import LocalSendCore

/// One input, as each of LocalSend's texts: an announcement or `register` body, a
/// `prepare-upload` request, a `prepare-upload` answer. Whatever is read must keep every field
/// within its bounds and read back the same after being written (`abort` if not).
func fuzzLocalSend(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    if let device = LocalSendDevice.decode(bytes) {
        guard bounded(device), LocalSendDevice.decode(device.encoded()) == device else { abort() }
    }
    if let request = LocalSendUploadRequest.decode(bytes) {
        guard bounded(request.info), !request.files.isEmpty,
            request.files.count <= LocalSendUploadRequest.maximumFiles,
            request.files.allSatisfy({
                $0.size >= 0 && $0.fileName.utf8.count <= LocalSendFile.maximumFileNameBytes
                    && ($0.preview?.utf8.count ?? 0) <= LocalSendFile.maximumPreviewBytes
            }),
            LocalSendUploadRequest.decode(request.encoded()) == request
        else { abort() }
    }
    if let session = LocalSendUploadSession.decode(bytes) {
        guard session.tokens.count <= LocalSendUploadRequest.maximumFiles,
            LocalSendUploadSession.decode(session.encoded()) == session
        else { abort() }
    }
    return 0
}

private func bounded(_ device: LocalSendDevice) -> Bool {
    device.alias.utf8.count <= LocalSendDevice.maximumAliasBytes
        && device.version.utf8.count <= LocalSendDevice.maximumVersionBytes
        && (device.deviceModel?.utf8.count ?? 0) <= LocalSendDevice.maximumModelBytes
        && !device.fingerprint.isEmpty && device.fingerprint.utf8.count <= LocalSendDevice.maximumFingerprintBytes
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzLocalSend` once per input.
@_cdecl("FuzzLocalSend_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzLocalSend(data, count) }
}
