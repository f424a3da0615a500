import Foundation
import HexKit
import HexTestSupport

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
