import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import QuickShareCore
import Testing

/// hexd as a Quick Share receiver, as a real daemon on loopback, with a phone made of the core's
/// sending machine: Tests/netns/quickshare.sh tests it against pyquickshare and an Android-like
/// sender in namespaces; this is the same path in `swift test`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct QuickShareTests {
    /// The daemon's Quick Share port, as its status gives it once its carriers are up (`hexctl wait`).
    private func port(of daemon: DaemonProcess) async throws -> UInt16 {
        let ready = try await daemon.hexctl(["wait", "--timeout", "10"])
        #expect(ready.status == 0, "\(ready.standardError)")
        return try #require(try await daemon.hexctlJSON(StatusReport.self, ["status"]).quickShare?.port)
    }

    @Test func aLinkAPhoneSharesLandsInTheInboxAsAHexOfThatLink() async throws {
        let daemon = try await DaemonProcess(name: "Desk", discoveryPort: try DaemonProcess.freeDiscoveryPort())
        var phone = try Phone(share: OutgoingShare(texts: [.init(kind: .url, text: "https://example.com/shared")]))
        try await phone.run(to: try await port(of: daemon))
        #expect(phone.outcome == .delivered)
        let hex = try #require(try await daemon.newestInboxHex())
        #expect(hex.links.map(\.url) == ["https://example.com/shared"])
        #expect(hex.senderName == "Pixel 8")
    }

    @Test func filesWaitForThePersonWhoSeesThePhonesPinAndLandWhole() async throws {
        let work = try TemporaryDirectory()
        let daemon = try await DaemonProcess(
            name: "Desk", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
            extraArguments: ["--downloads", work.file("downloads")])
        let bytes = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let share = OutgoingShare(files: [.init(name: "photo.jpg", size: Int64(bytes.count), mimeType: "image/jpeg")])
        let port = try await port(of: daemon)
        let sending = Task {
            var phone = try Phone(share: share, file: bytes)
            try await phone.run(to: port)
            return phone
        }
        var offer: String?
        try await waitUntil("the offer is listed", timeout: .seconds(10)) {
            let peers = try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"])
            offer = peers.compactMap { $0.pairing?.offer }.first
            return offer != nil
        }
        let accepted = try await daemon.hexctl(["pair", "--accept", "Pixel 8"])
        #expect(accepted.status == 0, "\(accepted.standardError)")
        let phone = try await sending.value
        #expect(phone.outcome == .delivered)
        #expect(offer?.contains("(PIN \(phone.pin))") == true, "the offer: \(offer ?? "none")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("downloads/photo.jpg"))) == Data(bytes))
        let hex = try #require(try await daemon.newestInboxHex())
        #expect(hex.hexDescription == "photo.jpg")
    }
}

/// A phone sharing to hexd over loopback: the core's sending machine on a real socket.
private struct Phone: Sendable {
    var machine: OutboundConnection
    let file: [UInt8]
    var outcome: OutboundConnection.Action?

    init(share: OutgoingShare, file: [UInt8] = []) throws {
        machine = OutboundConnection(share: share, keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        self.file = file
    }

    var pin: String { machine.pin ?? "" }

    /// Connects to hexd on loopback and shares until the machine is done (at most 30 s).
    mutating func run(to port: UInt16) async throws {
        let socket = try await StreamConnector.tcp(to: Endpoint(.loopback, port: port), timeout: .seconds(5))
        defer { socket.shutdown() }
        let info = EndpointInfo(deviceType: .phone, name: "Pixel 8", random: try SecureRandom.bytes(16))
        var pending = machine.opening(endpointID: Array("PHN1".utf8), info: info)
        var decoder = FrameDecoder(maximumFrameBytes: 5 << 20)
        let deadline = ContinuousClock.now + .seconds(30)
        while outcome == nil, ContinuousClock.now < deadline {
            for action in pending {
                switch action {
                case .send(let frame): try await socket.write(FrameDecoder.framed(frame), timeout: .seconds(5))
                case .sendFiles:
                    var offset = 0
                    while offset < file.count {
                        let end = min(offset + OutboundConnection.chunkBytes, file.count)
                        let frames = machine.fileChunk(
                            index: 0, bytes: Array(file[offset..<end]), last: end == file.count)
                        for case .send(let frame) in frames {
                            try await socket.write(FrameDecoder.framed(frame), timeout: .seconds(5))
                        }
                        offset = end
                    }
                default: outcome = action
                }
            }
            pending = []
            var bytes: [UInt8] = []
            let count = try await socket.read(maximumCount: 1 << 20, timeout: deadline - .now) { bytes = Array($0) }
            guard count > 0 else {
                pending = machine.peerClosed()
                continue
            }
            for frame in try decoder.feed(bytes) { pending += machine.receive(frame) }
        }
    }
}
