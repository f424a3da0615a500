import CFuzzDriver
import HexWeb

/// One input, as the bytes of one connection to the page, and as a server's answer to one of
/// hexd's requests, fed in pieces whose size the first byte picks (bytes split anywhere must read
/// the same). Any trap is a finding, and so is a request or response that breaks its reader's bounds.
func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
    guard let first = bytes.first else { return 0 }
    let piece = Int(first % 64) + 1
    let limits = HTTPRequestReader.Limits(bodyBytes: 4_096)
    var reader = HTTPRequestReader(limits: limits)
    var whole = HTTPRequestReader(limits: limits)
    let input = bytes.dropFirst()
    var action = HTTPRequestReader.Action.needMore
    var offset = input.startIndex
    while offset < input.endIndex, action == .needMore {
        let end = min(offset + piece, input.endIndex)
        action = reader.read(input[offset..<end])
        offset = end
    }
    guard action == whole.read(input) else { fatalError("a request read in pieces of \(piece) reads differently") }
    if case .request(let request) = action {
        guard request.body.count <= limits.bodyBytes, request.path.utf8.count <= limits.targetBytes else {
            fatalError("a request past the reader's limits")
        }
        _ = WebAccess(token: "0123456789abcdef", host: "127.0.0.1", port: 18_522).decide(request)
    }
    fuzzHTTPResponse(input, piece: piece)
    fuzzChunkedBody(input, piece: piece)
    return 0
}

/// The input as a chunked body (what follows an upload's head): read in pieces and whole, the same
/// bytes must come out, within the bound, and the same end or failure.
func fuzzChunkedBody(_ input: ArraySlice<UInt8>, piece: Int) {
    let limits = ChunkedDecoder.Limits(bodyBytes: 4_096)
    func decode(inPiecesOf size: Int) -> (body: [UInt8], taken: Int, finished: Bool, failure: ChunkedDecoder.Failure?) {
        var decoder = ChunkedDecoder(limits: limits)
        var body: [UInt8] = []
        var taken = 0
        var offset = input.startIndex
        while offset < input.endIndex {
            let end = min(offset + size, input.endIndex)
            let bytes = Array(input[offset..<end])
            do throws(ChunkedDecoder.Failure) {
                taken += try decoder.feed(bytes) { body.append(contentsOf: $0) }
            } catch {
                return (body, taken, decoder.isFinished, error)
            }
            offset = end
        }
        return (body, taken, decoder.isFinished, nil)
    }
    let pieces = decode(inPiecesOf: piece)
    let whole = decode(inPiecesOf: input.count + 1)
    // A failure takes no count of the piece it came in: bytes taken are compared when none came.
    guard pieces.body == whole.body, pieces.finished == whole.finished, pieces.failure == whole.failure,
        whole.failure != nil || pieces.taken == whole.taken
    else { fatalError("a chunked body read in pieces of \(piece) reads differently") }
    guard whole.body.count <= limits.bodyBytes, whole.taken <= input.count else {
        fatalError("a chunked body past its bound")
    }
}

func fuzzHTTPResponse(_ input: ArraySlice<UInt8>, piece: Int) {
    let limits = HTTPResponseReader.Limits(bodyBytes: 4_096)
    var reader = HTTPResponseReader(limits: limits)
    var whole = HTTPResponseReader(limits: limits)
    var action = HTTPResponseReader.Action.needMore
    var offset = input.startIndex
    while offset < input.endIndex, action == .needMore {
        let end = min(offset + piece, input.endIndex)
        action = reader.read(input[offset..<end])
        offset = end
    }
    if action == .needMore { action = reader.end() }
    var wholeAction = whole.read(input)
    if wholeAction == .needMore { wholeAction = whole.end() }
    guard action == wholeAction else { fatalError("a response read in pieces of \(piece) reads differently") }
    if case .response(let response) = action, response.body.count > limits.bodyBytes {
        fatalError("a response past the reader's limits")
    }
}

/// The program's entry point (SwiftPM names it after the module): libFuzzer's driver, calling
/// `fuzzHTTPRequest` once per input.
@_cdecl("FuzzHTTPRequest_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzzHTTPRequest(data, count) }
}
