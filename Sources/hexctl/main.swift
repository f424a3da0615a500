import HexCommandLine
import HexKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let help = """
    USAGE: hexctl <command> [options]

    The command-line client of hexd.

    COMMANDS:
      decode [--json] [<file>]   Read envelopes, one JSON object per line, from <file> or standard
                                 input, and show how hexd reads each one: the envelope after the
                                 tolerance rules, and the hex it would store (defaults filled in);
                                 or why it cannot be read. Blank lines are skipped. Every value is
                                 printed as a JSON string, so control characters show escaped.

    Commands that talk to a running daemon are not in this build yet.

    OPTIONS:
      --json          One JSON object per input line:
                      {"line":N,"envelope":{...},"hex":{...}} or {"line":N,"error":"..."}.
      --version       Show the version.
      -h, --help      Show this help.

    EXIT CODES: 0 every envelope was read, 1 at least one could not be read (or the file cannot be
    opened), 64 usage error.
    """

/// Prints `message` on stderr and exits with `code`.
func fail(_ message: String, code: ExitCode) -> Never {
    exit(code, program: "hexctl", message: message)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) || arguments.isEmpty {
    print(help)
    exit(arguments.isEmpty ? 64 : 0)
}
if arguments == ["--version"] {
    print(HexdVersion.current)
    exit(0)
}
guard arguments.removeFirst() == "decode" else { fail("unknown command; see hexctl --help", code: .usage) }
let asJSON = arguments.contains("--json")
arguments.removeAll { $0 == "--json" }
guard arguments.count <= 1, arguments.first?.hasPrefix("-") != true else {
    fail("decode takes --json and at most one file; see hexctl --help", code: .usage)
}

/// All bytes of a file descriptor, read until end of file.
func readAll(_ descriptor: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}

/// `value` as compact JSON with sorted keys, ISO 8601 dates and unescaped slashes.
func json(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    // Hexes and strings hold no values JSON cannot write (no NaN), so encoding does not fail.
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
}

/// Prints how hexd reads one line; returns false when the line is not an envelope.
func describe(line: some Collection<UInt8>, number: Int, asJSON: Bool) -> Bool {
    let envelope: DataSendWrapper
    do {
        envelope = try DataSendWrapper.decode(from: line)
    } catch {
        print(asJSON ? "{\"line\":\(number),\"error\":\(json(error.description))}" : "line \(number): cannot be read: \(error)")
        return false
    }
    let hex = envelope.hex.map { HexManager.makeHex(from: $0, location: .inbox, at: Date()) }
    if asJSON {
        let envelopeJSON = String(decoding: envelope.encodedLine(), as: UTF8.self)
        print("{\"line\":\(number),\"envelope\":\(envelopeJSON),\"hex\":\(hex.map(json) ?? "null")}")
        return true
    }
    print("line \(number): operationType \(json(envelope.operationType)), versionID \(json(envelope.versionID))"
        + (envelope.messageID.map { ", messageID \(json($0))" } ?? ""))
    if let message = envelope.message { print("  message \(json(message))") }
    if let hex {
        print("  hex: hexDescription \(json(hex.hexDescription)), hexColor \(json(hex.hexColor)), "
            + "senderName \(json(hex.senderName)), senderUUID \(json(hex.senderUUID))")
        for (index, link) in hex.links.enumerated() {
            print("  link \(index + 1): url \(json(link.url)), linkDescription \(json(link.linkDescription)), service \(json(link.service))")
        }
    } else if let type = envelope.jmObjectType {
        print("  jmObjectType \(json(type)): not a hex")
    }
    return true
}

let input: Data
if let path = arguments.first, path != "-" {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { fail("cannot read \(path): \(String(cString: strerror(errno)))", code: .failure) }
    input = readAll(descriptor)
    close(descriptor)
} else {
    input = readAll(STDIN_FILENO)
}

var failures = 0
for (index, rawLine) in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
    let line = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine
    guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { continue }
    if !describe(line: line, number: index + 1, asJSON: asJSON) { failures += 1 }
}
exit(failures == 0 ? 0 : 1)
