import Foundation
import HexHarness
import HexKit
import HexNet
import HexTLS
import Synchronization

/// A receiver at an address a test sends to, over TLS with a key of its own, that records the
/// `messageID` of every envelope it reads and acknowledges each as stored, but holds the Ack of
/// the first until `release` (the sender's attempt stays under way meanwhile).
final class HoldingPeer: Sendable {
    private struct State {
        var received: [String] = []
        var released = false
    }

    /// The state, shared with the connections' tasks.
    private final class Shared: Sendable {
        let state = Mutex(State())
        var released: Bool { state.withLock { $0.released } }
    }

    private let listener: StreamListener
    private let shared = Shared()
    private let task: Task<Void, Never>

    var port: UInt16 { listener.port }
    /// The ids read so far, in order.
    var received: [String] { shared.state.withLock { $0.received } }

    /// Listens on `address`:`port`, with the key and certificate kept in `directory`.
    init(address: IPAddress, port: UInt16, directory: TemporaryDirectory) throws {
        let (identity, _) = try TLSIdentity.loadOrCreate(
            keyPath: directory.file("holder.key"), certificatePath: directory.file("holder.crt"),
            commonName: "holder")
        let context = try TLSContext(identity: identity)
        let listener = try StreamListener.tcp(address: address, port: port)
        self.listener = listener
        let shared = shared
        task = Task {
            await withDiscardingTaskGroup { group in
                while let socket = try? await listener.accept() {
                    group.addTask { await Self.serve(socket, context: context, shared: shared) }
                }
            }
        }
    }

    deinit { task.cancel() }

    /// Lets the first Ack go.
    func release() { shared.state.withLock { $0.released = true } }

    private static func serve(_ socket: Socket, context: TLSContext, shared: Shared) async {
        defer { socket.shutdown() }
        guard
            let stream = try? await TLSStream.handshake(
                over: socket, context: context, as: .server, timeout: .seconds(5))
        else { return }
        let connection = StreamConnection(stream: stream, maximumLineLength: 1 << 20)
        while case .line(let line)? = try? await connection.readLine(timeout: .seconds(30)),
            let envelope = try? Envelope.decode(from: line), let messageID = envelope.messageID
        {
            let isFirst = shared.state.withLock {
                $0.received.append(messageID)
                return $0.received.count == 1
            }
            if isFirst {
                // Bounded: a test that never releases gets its answer from the sender's timeout.
                for _ in 0..<300 where !shared.released { try? await Task.sleep(for: .milliseconds(100)) }
            }
            let ack = Envelope.ack(.stored, messageID: messageID, message: "stored", versionID: HexdVersion.current)
            guard (try? await connection.writeLine(ack.encodedLine(), timeout: .seconds(5))) != nil else { return }
        }
    }
}
