import Foundation
import HexCarrier
import HexCommandLine
import HexEngine
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import QuickShareCore
import Synchronization
import Testing

@testable import HexDaemon
@testable import QuickShareCarrier

/// Two hexd as Quick Share devices, whole carriers with real stores, joined by connections held in
/// memory (`MemoryChannel`): one sends as it sends to a phone, the other keeps what arrives as it
/// keeps a phone's share, from the UKEY2 handshake to the hex in its inbox and the file in its
/// downloads folder. No socket is opened.
@Suite(.timeLimit(.minutes(1))) struct QuickShareCarrierMemoryTests {
    /// One hexd's Quick Share carrier, its store and its downloads folder.
    private struct Device {
        let carrier: QuickShareCarrier
        let home: CarrierHome

        var directory: TemporaryDirectory { home.directory }
        var downloads: String { home.downloads }

        /// The ID the other side lists it by, once told of it.
        var id: String { QuickShareID.of(endpointID: String(decoding: carrier.endpointID, as: UTF8.self)) ?? "" }

        init(
            _ name: String, takesFilesUnasked: Bool = true,
            connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel = { endpoint, _ in
                throw Unreachable(endpoint: endpoint)
            }
        ) throws {
            home = try CarrierHome(name)
            var settings = QuickShareSettings()
            (settings.takesFilesUnasked, settings.wakesPhones) = (takesFilesUnasked, false)
            carrier = try QuickShareCarrier.detached(
                settings, name: name, intake: home.intake, downloads: home.incomingFiles, dnssd: NoDNSSD(),
                claims: home.claims, gate: home.gate, trimmer: MemoryTrimmer(), events: home.events,
                logger: home.logger, connect: connect)
        }

        /// Tells this device's carrier of `receiver` as DNS-SD would: its instance and endpoint info.
        func hears(_ receiver: QuickShareCarrier) async {
            let info = await receiver.info
            await carrier.found(
                DNSSDFound(
                    name: QuickShareService.instanceName(endpointID: receiver.endpointID),
                    keys: ["n": Base64URL.encode(info.bytes)], address: .loopback, port: 18525,
                    interval: .seconds(40), leaving: false))
        }

        /// What its inbox holds, newest first.
        func inbox() async throws -> [Hex] { try await home.inbox() }
    }

    /// A sender whose every connection reaches `receiver`, served in a task of its own as its
    /// listener would serve a phone's; each connection ends once the receiver is done with it.
    private static func sender(to receiver: Device) throws -> Device {
        let carrier = receiver.carrier
        // Numbered as the listener numbers them: each connection's offer has a key of its own.
        let connections = Atomic<UInt64>(0)
        return try Device("Ada") { _, _ in
            let (here, there) = MemoryChannel.pair()
            let number = connections.add(1, ordering: .relaxed).newValue
            Task {
                await carrier.receive(over: there, from: Endpoint(.loopback, port: 40000), number: number) {}
                there.shutdown()
            }
            return here
        }
    }

    @Test func aLinkGoesFromHandshakeToTheReceiversInbox() async throws {
        let grace = try Device("Grace")
        let ada = try Self.sender(to: grace)
        await ada.hears(grace.carrier)
        let hex = HexJM(senderName: "Ada", links: [LinkJM(url: "https://example.com/trip", linkDescription: nil)])
        let receipt = try await ada.carrier.deliver(
            .store(hex, versionID: HexdVersion.current, messageID: UUID().uuidString), to: grace.id,
            timeout: .seconds(20))
        #expect(receipt.delivery.status == .received, "Quick Share confirms what its receiver accepted")
        #expect(receipt.delivery.message.hasPrefix("Quick Share link accepted (PIN "))
        let kept = try await grace.inbox()
        #expect(kept.count == 1)
        #expect(kept.first?.links.map(\.url) == ["https://example.com/trip"])
        #expect(kept.first?.hexColor == ForeignMessage.quickShare.color, "a Quick Share device's hexes are its colour")
    }

    @Test func aFileLandsWholeInTheReceiversDownloadsWithAHexNamingIt() async throws {
        let grace = try Device("Grace")
        let ada = try Self.sender(to: grace)
        await ada.hears(grace.carrier)
        // Past one chunk (512 KiB), so that the file goes in several payloads.
        let bytes = (0..<(700 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = ada.directory.file("photo.jpg")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let delivery = try await ada.carrier.sendFiles([path], to: grace.id) { _, _, _ in }
        #expect(delivery.files == 1 && delivery.bytes == Int64(bytes.count))
        let landed = try #require(FileManager.default.contents(atPath: grace.downloads + "/photo.jpg"))
        #expect(Array(landed) == bytes, "every byte, in order")
        // The receiver says goodbye once the last payload is in, and keeps the hex naming the files
        // as its connection ends: the sender may be told before the hex is stored.
        try await waitUntil("a hex links the file", timeout: .seconds(20)) {
            try await grace.inbox().first?.links.map(\.url).first?.hasSuffix("photo.jpg") == true
        }
    }

    @Test(arguments: [true, false]) func filesWaitForThePersonWhoSeesTheSendersPIN(accepting: Bool) async throws {
        let grace = try Device("Grace", takesFilesUnasked: false)
        let ada = try Self.sender(to: grace)
        await ada.hears(grace.carrier)
        let path = ada.directory.file("notes.pdf")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 5_000)))
        let (sender, receiverID) = (ada.carrier, grace.id)
        let sending = Task { try await sender.sendFiles([path], to: receiverID) { _, _, _ in } }
        try await waitUntil("the offer is listed while it waits", timeout: .seconds(20)) {
            await grace.carrier.listed(at: .now).contains { $0.offer != nil }
        }
        let waiting = try #require(await grace.carrier.listed(at: .now).first { $0.offer != nil })
        #expect(waiting.offer?.via == "Quick Share" && waiting.offer?.acceptingPairs == false)
        #expect(waiting.offer?.what.hasPrefix("notes.pdf, 4.9 KiB (PIN ") == true, "\(waiting.offer?.what ?? "")")
        #expect(FileManager.default.contents(atPath: grace.downloads + "/notes.pdf") == nil, "nothing before the yes")
        let key = try #require(await grace.carrier.trustSubject(named: "Ada", for: accepting ? .accept : .decline))
        _ = try await grace.carrier.trust(accepting ? .accept : .decline, key)
        let result = await sending.result
        if accepting {
            let delivery = try result.get()
            let pin = try #require(waiting.offer?.what.split(separator: "PIN ").last?.dropLast())
            #expect(delivery.report("5 KB").hasSuffix("PIN \(pin)"), "both sides have the same PIN")
            #expect(FileManager.default.contents(atPath: grace.downloads + "/notes.pdf")?.count == 5_000)
            try await waitUntil("a hex links the file", timeout: .seconds(20)) { try await grace.inbox().count == 1 }
        } else {
            #expect(throws: SendError.self) { try result.get() }
            #expect(FileManager.default.contents(atPath: grace.downloads + "/notes.pdf") == nil)
            #expect(try await grace.inbox().isEmpty)
        }
    }

    @Test func aReceiverThatIsNotListedIsNotReachedAndTheSendWaits() async throws {
        let ada = try Device("Ada")
        await #expect(
            throws: SendError.undelivered(
                "quickshare:ZZZZ is not receiving now (it is listed while its "
                    + "Quick Share is visible)")
        ) {
            _ = try await ada.carrier.deliver(
                .store(HexJM(hexDescription: "hi"), versionID: HexdVersion.current), to: "quickshare:ZZZZ",
                timeout: .seconds(1))
        }
    }
}
