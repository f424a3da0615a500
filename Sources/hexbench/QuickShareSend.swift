import FoundationEssentials
import Glibc
import HexHarness
import HexNet
import QuickShareCore

/// The sender of Tests/netns/quickshare-bench.sh: a file shared as Android shares it, by the core's
/// sending machine, fast enough that the receiver's time is what is measured (the Python senders
/// spend more time sealing a chunk than hexd does opening it).
enum QuickShareSend {
    /// `hexbench quickshare-send HOST PORT FILE`: prints the outcome and the milliseconds from the
    /// connection to it; 0 when the receiver took the file, 1 otherwise, 64 on bad arguments.
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 3, let address = IPAddress(arguments[0]), let port = UInt16(arguments[1]) else {
            return 64
        }
        let path = arguments[2]
        do {
            let file = try DiskFile.reading(path)
            let size = try file.status().size
            let name = String(path.split(separator: "/").last ?? Substring(path))
            var sender = try QuickShareSender(
                share: OutgoingShare(files: [.init(name: name, size: size, mimeType: "application/octet-stream")]))
            let start = ContinuousClock.now
            try await sender.run(to: Endpoint(address, port: port), files: [size], limit: .seconds(600)) {
                _, offset, count in
                var failure: DiskFileError?
                let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
                    do throws(DiskFileError) {
                        filled = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
                return bytes
            }
            let elapsed = ContinuousClock.now - start
            print("\(sender.outcome.map { "\($0)" } ?? "no outcome") \(Int(clamping: elapsed.inSeconds * 1_000))")
            return sender.outcome == .delivered ? 0 : 1
        } catch {
            print("failed: \(error)")
            return 1
        }
    }
}
