import Glibc
import HexCommandLine
import HexControl
import HexKit

/// The most bytes hexctl reads from a file or standard input: a control request line's bound
/// (a hex from `send --file` must fit in one), and far more than any envelope file needs.
let inputLimit = ControlLimits.requestLineBytes

/// All bytes of a file descriptor, read until end of file.
/// - Throws: `CommandFailure` past `inputLimit` bytes (`/dev/zero` ends there, not in memory).
func readAll(_ descriptor: Int32, from path: String) throws -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            guard data.count + count <= inputLimit else {
                let name = path == "-" ? "standard input" : path
                throw CommandFailure(.failure, "\(name) is larger than \(inputLimit >> 20) MiB, the most hexctl reads")
            }
            data.append(contentsOf: buffer[..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}

/// `value` as the control socket writes JSON (compact, sorted keys, ISO 8601 dates).
func json(_ value: some Encodable) -> String {
    // Hexes and strings hold no values JSON cannot write (no NaN), so encoding does not fail.
    (try? ControlCoding.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
}

/// Prints how hexd reads one line; returns false when the line is not an envelope.
func describe(line: some Collection<UInt8>, number: Int, asJSON: Bool) -> Bool {
    let envelope: Envelope
    do {
        envelope = try Envelope.decode(from: line)
    } catch {
        printOutput(
            asJSON
                ? "{\"line\":\(number),\"error\":\(json(error.description))}"
                : "line \(number): cannot be read: \(error)")
        return false
    }
    let hex = envelope.hex.map { HexManager.makeHex(from: $0, location: .inbox, at: Date()) }
    if asJSON {
        let envelopeJSON = String(decoding: envelope.encodedLine(), as: UTF8.self)
        printOutput("{\"line\":\(number),\"envelope\":\(envelopeJSON),\"hex\":\(hex.map(json) ?? "null")}")
        return true
    }
    printOutput(
        "line \(number): operationType \(json(envelope.operationType)), versionID \(json(envelope.versionID))"
            + (envelope.messageID.map { ", messageID \(json($0))" } ?? ""))
    if let message = envelope.message { printOutput("  message \(json(message))") }
    if let hex {
        printOutput(
            "  hex: hexDescription \(json(hex.hexDescription)), hexColor \(json(hex.hexColor)), "
                + "senderName \(json(hex.senderName)), senderUUID \(json(hex.senderUUID))")
        for (index, link) in hex.links.enumerated() {
            printOutput(
                "  link \(index + 1): url \(json(link.url)), linkDescription \(json(link.linkDescription)), "
                    + "service \(json(link.service))"
            )
        }
    } else if let type = envelope.jmObjectType {
        printOutput("  jmObjectType \(json(type)): not a hex")
    }
    return true
}

/// `hexctl decode [--json] [<file>]`: how hexd reads each envelope line.
func runDecode(_ invocation: Invocation) throws -> ExitCode {
    guard invocation.arguments.positionals.count <= 1 else { throw UsageError("decode takes at most one file") }
    let input = try readInput(invocation.arguments.positionals.first ?? "-")
    var failures = 0
    for (index, rawLine) in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
        let line = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { continue }
        if !describe(line: line, number: index + 1, asJSON: invocation.json) { failures += 1 }
    }
    return failures == 0 ? .success : .failure
}

/// The bytes of a file, or of standard input for `-`, at most `inputLimit`.
func readInput(_ path: String) throws -> Data {
    guard path != "-" else { return try readAll(STDIN_FILENO, from: path) }
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else {
        throw CommandFailure(.failure, "cannot read \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    return try readAll(descriptor, from: path)
}
