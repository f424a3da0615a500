import Foundation
import HexCarrier
import HexEngine
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import HexWeb
import LocalSendCore
import Synchronization
import Testing

@testable import HexDaemon
@testable import LocalSendCarrier

/// How long each step may wait: a guard against a hang, not a speed check. hexd's 10 s for a
/// connection's start, each way, are a LAN's; a debug build beside hundreds of tests on two cores
/// needs more.
private let patience: Duration = .seconds(30)

/// hexd's LocalSend carrier, whole, with a real store, driven by a phone held in memory
/// (`MemoryChannel`): every request goes through TLS (the phone's certificate shown, hexd's
/// checked against the fingerprint announced) and hexd's HTTP reader, from the handshake to the hex
/// in the inbox and the file in the downloads folder, and hexd's own requests reach the phone the
/// same way. No socket is opened. The phone's requests are those of LocalSend 1.18's core
/// (`core/src/http/client/v2.rs`: `register`, `prepare_upload`, then `upload` streamed with no
/// length, so chunked); the netns tests meet real clients.
@Suite(.timeLimit(.minutes(2))) struct LocalSendCarrierMemoryTests {
    /// A LocalSend phone at 192.0.2.7: its certificate, and its receiver's answers to hexd.
    private final class Phone: Sendable {
        static let address = IPAddress("192.0.2.7") ?? .loopback
        let tls: ForeignTLSContext
        let description: LocalSendDevice
        /// The requests hexd made of it, in order, and the connections it served to their end.
        let heard = Mutex<[HTTPRequest]>([])
        let served = Atomic<Int>(0)

        /// An answer that does not read as HTTP.
        struct Unreadable: Error {
            let reason: String
        }

        init(in directory: TemporaryDirectory) throws {
            let (persona, _) = try PersonaIdentity.loadOrCreate(
                keyPath: directory.file("phone.key"), certificatePath: directory.file("phone.crt"),
                commonName: "LocalSend User", label: "LocalSend")
            tls = try ForeignTLSContext(persona: persona)
            description = LocalSendDevice(
                alias: "Pixel", version: "2.1", deviceModel: "Pixel 8", deviceType: .mobile,
                fingerprint: persona.fingerprint.description.uppercased(), port: 53317, scheme: .https)
        }

        /// The ID hexd lists it by.
        var id: String { LocalSendPresence<IPAddress>.id(of: description) ?? "" }

        /// Asks hexd's carrier `request` (its body written as one, or in `chunks` as HTTP/1.1's
        /// chunked coding) on a connection of its own, and reads the answer.
        func ask(
            _ carrier: LocalSendCarrier, _ request: HTTPRequest, chunks: [[UInt8]]? = nil
        ) async throws -> HTTPResponseReader.Response {
            let (here, there) = MemoryChannel.pair(
                client: Endpoint(Self.address, port: 40000), server: Endpoint(.loopback, port: carrier.port))
            let serving = Task { await carrier.answer(there) }
            defer { here.shutdown() }
            let connection = try await TLSConnection.handshake(
                over: here, context: tls, as: .client, timeout: patience)
            if let chunks {
                var head = request
                head.headers.append(name: "Transfer-Encoding", value: "chunked")
                var bytes = head.serializedHead(host: "hexd", bodyLength: nil)
                for chunk in chunks + [[]] {
                    bytes += Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10]
                }
                try await connection.write(bytes, timeout: patience)
            } else {
                try await connection.write(request.serialized(host: "hexd"), timeout: patience)
            }
            let answer = try await Self.read(from: connection)
            // At once, not at the end of the scope: hexd drains the connection until the client closes.
            here.shutdown()
            await serving.value
            return answer
        }

        /// Registers with hexd's carrier (`register`), and reads the answer.
        func register(with carrier: LocalSendCarrier) async throws -> HTTPResponseReader.Response {
            try await post("/api/localsend/v2/register", description.encoded(), to: carrier)
        }

        /// Offers `files` to hexd's carrier (`prepare-upload`), and reads the answer.
        func offer(_ files: [LocalSendFile], to carrier: LocalSendCarrier) async throws -> HTTPResponseReader.Response {
            let body = LocalSendUploadRequest(info: description, files: files).encoded()
            return try await post("/api/localsend/v2/prepare-upload", body, to: carrier)
        }

        private func post(
            _ path: String, _ body: [UInt8], to carrier: LocalSendCarrier
        ) async throws -> HTTPResponseReader.Response {
            try await ask(
                carrier,
                HTTPRequest(
                    method: "POST", path: path, headers: HTTPHeaders([("Content-Type", "application/json")]),
                    body: body))
        }

        private static func read(from connection: TLSConnection) async throws -> HTTPResponseReader.Response {
            var reader = HTTPResponseReader(limits: .init(bodyBytes: 1 << 20))
            while true {
                var action = HTTPResponseReader.Action.needMore
                let count = try await connection.read(maximumCount: 65_536, timeout: patience) {
                    action = reader.read($0)
                }
                if count == 0 { action = reader.end() }
                switch action {
                case .needMore: continue
                case .response(let response): return response
                case .fail(let reason): throw Unreadable(reason: reason)
                }
            }
        }

        /// Serves one of hexd's requests on `channel` as the app's receiver would, answered by
        /// `answer` (`register` with the phone's own description).
        func serve(_ channel: MemoryChannel, answer: @Sendable (HTTPRequest) -> HTTPResponse) async {
            defer {
                channel.shutdown()
                served.add(1, ordering: .relaxed)
            }
            guard
                let connection = try? await TLSConnection.handshake(
                    over: channel, context: tls, as: .server, timeout: patience)
            else { return }
            var reader = HTTPRequestReader(limits: .init(bodyBytes: 1 << 20))
            while true {
                var action = HTTPRequestReader.Action.needMore
                guard
                    let count = try? await connection.read(
                        maximumCount: 65_536, timeout: patience,
                        {
                            action = reader.read($0)
                        }), count > 0
                else { return }
                guard case .request(let request) = action else { continue }
                heard.withLock { $0.append(request) }
                let response =
                    request.path == "/api/localsend/v2/register"
                    ? HTTPResponse(.ok, contentType: "application/json", body: description.encoded())
                    : answer(request)
                try? await connection.write(response.serialized(), timeout: patience)
                return
            }
        }
    }

    /// One hexd's LocalSend carrier over its home; its requests reach `phone`, answered by `answer`.
    private static func hexd(
        _ home: CarrierHome, reaching phone: Phone,
        answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in HTTPResponse(.noContent) }
    ) throws -> LocalSendCarrier {
        let (persona, _) = try PersonaIdentity.loadOrCreate(
            keyPath: home.directory.file("localsend.key"), certificatePath: home.directory.file("localsend.crt"),
            commonName: "hexd", label: "LocalSend")
        return try LocalSendCarrier.detached(
            LocalSendSettings(), persona: persona, port: 53317, visibility: AlwaysVisible(), intake: home.intake,
            downloads: home.incomingFiles, name: "Grace", claims: home.claims, gate: home.gate,
            trimmer: MemoryTrimmer(), events: home.events, logger: home.logger, deadlines: .init(both: patience)
        ) { _, _ in
            let (here, there) = MemoryChannel.pair()
            Task { await phone.serve(there, answer: answer) }
            return here
        }
    }

    @Test func aRegisteredPhonesMessageGoesFromHandshakeToTheInbox() async throws {
        let home = try CarrierHome("Grace")
        let phone = try Phone(in: home.directory)
        let carrier = try Self.hexd(home, reaching: phone)
        let registered = try await phone.register(with: carrier)
        #expect(registered.status == 200)
        #expect(LocalSendDevice.decode(registered.body)?.fingerprint == carrier.fingerprint, "hexd describes itself")
        let listed = await carrier.devices.map { $0.peerID }
        #expect(listed == [phone.id], "its certificate proved the fingerprint it claims")
        let note = "Dinner at 8 https://example.com/menu"
        let message = LocalSendFile(
            id: "m1", fileName: "message.txt", size: Int64(note.utf8.count), fileType: "text/plain", preview: note)
        let offered = try await phone.offer([message], to: carrier)
        #expect(offered.status == 204, "a message is taken whole, nothing to upload")
        let kept = try await home.inbox()
        #expect(kept.count == 1)
        #expect(kept.first?.links.map(\.url) == ["https://example.com/menu"])
        #expect(kept.first?.hexColor == ForeignMessage.localSend.color)
    }

    @Test func aChunkedUploadAsLocalSend118SendsItLandsWholeWithAHexNamingIt() async throws {
        let home = try CarrierHome("Grace")
        let phone = try Phone(in: home.directory)
        let carrier = try Self.hexd(home, reaching: phone)
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let photo = LocalSendFile(
            id: "f1", fileName: "beach.jpg", size: Int64(bytes.count), fileType: "image/jpeg",
            sha256: try SHA256Digest.hex(of: bytes))
        let offered = try await phone.offer([photo], to: carrier)
        #expect(offered.status == 200, "\(String(decoding: offered.body, as: UTF8.self))")
        let session = try #require(LocalSendUploadSession.decode(offered.body))
        let token = try #require(session.tokens.first { $0.fileID == "f1" }?.token)
        let upload = HTTPRequest(
            method: "POST", path: "/api/localsend/v2/upload",
            query: ["sessionId": session.sessionID, "fileId": "f1", "token": token],
            headers: HTTPHeaders([("Content-Type", "image/jpeg")]))
        // In pieces and with no length, as the 1.18 core streams what its channel hands it (`client/v2.rs`,
        // `upload`: `reqwest::Body::wrap_stream`).
        let chunks = stride(from: 0, to: bytes.count, by: 65_536).map {
            Array(bytes[$0..<min($0 + 65_536, bytes.count)])
        }
        let uploaded = try await phone.ask(carrier, upload, chunks: chunks)
        #expect(uploaded.status == 200, "\(String(decoding: uploaded.body, as: UTF8.self))")
        let landed = try #require(FileManager.default.contents(atPath: home.downloads + "/beach.jpg"))
        #expect(Array(landed) == bytes, "every byte, in order")
        try await waitUntil("a hex links the file", timeout: patience) {
            try await home.inbox().first?.links.map(\.url).first?.hasSuffix("beach.jpg") == true
        }
    }

    @Test func aPhoneHeardIsRegisteredWithAndShownWhatHexdSends() async throws {
        let home = try CarrierHome("Grace")
        let phone = try Phone(in: home.directory)
        let carrier = try Self.hexd(home, reaching: phone)
        await carrier.heard(phone.description, from: Phone.address)
        try await waitUntil("the phone is proven and listed", timeout: patience) {
            await carrier.devices.map { $0.peerID } == [phone.id]
        }
        let hex = HexJM(senderName: "Grace", links: [LinkJM(url: "https://example.com/a", linkDescription: nil)])
        let receipt = try await carrier.deliver(
            .store(hex, versionID: HexdVersion.current, messageID: UUID().uuidString), to: phone.id,
            timeout: patience)
        #expect(receipt.delivery.status == .received && receipt.delivery.message == "LocalSend message shown")
        let offer = try #require(phone.heard.withLock { $0.last })
        #expect(offer.path == "/api/localsend/v2/prepare-upload")
        let files = try #require(LocalSendUploadRequest.decode(offer.body)).files
        #expect(files.map(\.preview) == ["https://example.com/a"], "a lone link goes as the message's text")
    }

    @Test func aPhoneThatShowsAnotherCertificateIsNeitherListedNorSentTo() async throws {
        let home = try CarrierHome("Grace")
        let phone = try Phone(in: home.directory)
        let carrier = try Self.hexd(home, reaching: phone)
        var impostor = phone.description
        impostor.fingerprint = String(repeating: "AB", count: 32)
        await carrier.heard(impostor, from: Phone.address)
        // hexd registers with a device it hears: its connection to the phone shows the certificate.
        try await waitUntil("hexd's connection to the phone ended", timeout: patience) {
            phone.served.load(ordering: .relaxed) == 1
        }
        let listed = await carrier.devices
        #expect(listed.isEmpty)
        let written = phone.heard.withLock { $0 }
        #expect(written.isEmpty, "nothing is written to a certificate not the one announced")
    }
}
