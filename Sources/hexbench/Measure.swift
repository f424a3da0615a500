import Foundation
import HexHarness
import HexKit

/// Seconds taken by `body`, on the monotonic clock.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return (clock.now - start).inSeconds
}

/// Waits for a helper process of the benchmark (attackers in a process of their own) and returns
/// what it wrote to `output`, the read end of its standard output, which is closed after.
func outputOnExit(of process: SpawnedProcess, reading output: Int32) -> String {
    process.waitBlocking()
    defer { close(output) }
    var said: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4_096)
    while case let count = read(output, &buffer, buffer.count), count > 0 || (count < 0 && errno == EINTR) {
        said += buffer[..<max(count, 0)]
    }
    return String(decoding: said, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Makes `name.key` and `name.crt` with the openssl command: an Ed25519 key, and a certificate
/// with `names` subject alternative names of 70 bytes each (1,300 make 95 KB).
func makeCertificate(_ name: String, names: Int, in directory: TemporaryDirectory) async throws {
    let alternatives =
        names == 0
        ? ""
        : "subjectAltName = @alt\n[alt]\n"
            + (1...names).map { "DNS.\($0) = \(String(repeating: "a", count: 60)).\($0).example" }
            .joined(separator: "\n")
    let config =
        "[req]\ndistinguished_name = dn\nx509_extensions = ext\nprompt = no\n[dn]\nCN = \(name)\n[ext]\n"
        + "basicConstraints = CA:FALSE\n" + alternatives + "\n"
    guard FileManager.default.createFile(atPath: directory.file(name + ".cnf"), contents: Data(config.utf8)) else {
        throw BenchFailure("cannot write \(name).cnf")
    }
    let made = try await PackageExecutable.run(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1", "-config", directory.file(name + ".cnf"),
            "-keyout", directory.file(name + ".key"), "-out", directory.file(name + ".crt"),
        ])
    guard made.status == 0 else { throw BenchFailure("openssl: \(made.standardError)") }
}
