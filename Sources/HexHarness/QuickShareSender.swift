import HexNet
import QuickShareCore

/// A Quick Share sender on a real socket, made of the core's sending machine (`OutboundConnection`,
/// which sends as Android does): the phone of the loopback tests, and `hexbench`'s sender for the
/// Quick Share benchmark, fast enough not to be what a receiver's time measures.
public struct QuickShareSender: Sendable {
    public private(set) var machine: OutboundConnection
    /// How the exchange ended: `.delivered`, `.declined`, or `.close` with why; nil while it goes on.
    public private(set) var outcome: OutboundConnection.Action?
    private let name: String

    /// - Parameter name: the device name the receiver shows.
    public init(share: OutgoingShare, name: String = "Pixel 8") throws {
        machine = OutboundConnection(share: share, keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        self.name = name
    }

    /// The PIN both sides show, once the handshake is done.
    public var pin: String { machine.pin ?? "" }

    /// Connects to `endpoint` and shares until the machine is done, or until `limit`. The files'
    /// bytes come from `read(index, offset, count)`, in chunks of `OutboundConnection.chunkBytes`.
    public mutating func run(
        to endpoint: Endpoint, files: [Int64] = [], limit: Duration = .seconds(30),
        read: (_ index: Int, _ offset: Int64, _ count: Int) throws -> [UInt8] = { _, _, _ in [] }
    ) async throws {
        let socket = try await StreamConnector.tcp(to: endpoint, timeout: .seconds(5))
        defer { socket.shutdown() }
        let info = EndpointInfo(deviceType: .phone, name: name, random: try SecureRandom.bytes(16))
        var pending = machine.opening(endpointID: Array("PHN1".utf8), info: info)
        var decoder = FrameDecoder(maximumFrameBytes: 5 << 20)
        let deadline = ContinuousClock.now + limit
        while outcome == nil, ContinuousClock.now < deadline {
            for action in pending {
                switch action {
                case .send(let frame):
                    try await socket.write(FrameDecoder.framed(frame), timeout: .seconds(5))
                case .sendFiles:
                    try await sendFiles(files, over: socket, read: read)
                case .declined, .delivered, .close:
                    outcome = action
                }
            }
            pending = []
            guard outcome == nil else { break }
            var bytes: [UInt8] = []
            let count = try await socket.read(maximumCount: 64 << 10, timeout: deadline - .now) { bytes = Array($0) }
            guard count > 0 else {
                pending = machine.peerClosed()
                continue
            }
            for frame in try decoder.feed(bytes) { pending += machine.receive(frame) }
        }
    }

    private mutating func sendFiles(
        _ sizes: [Int64], over socket: Socket, read: (Int, Int64, Int) throws -> [UInt8]
    ) async throws {
        for (index, size) in sizes.enumerated() {
            var offset: Int64 = 0
            repeat {
                let count = Int(min(Int64(OutboundConnection.chunkBytes), size - offset))
                let bytes = try read(index, offset, count)
                offset += Int64(bytes.count)
                for case .send(let frame) in machine.fileChunk(index: index, bytes: bytes, last: offset >= size) {
                    try await socket.write(FrameDecoder.framed(frame), timeout: .seconds(5))
                }
                guard bytes.count == count else { throw QuickShareError("file \(index) ended at byte \(offset)") }
            } while offset < size
        }
    }
}
