import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import HexWeb
import LocalSendCore

extension LocalSendCarrier {
    /// How long a send waits for a device's answer: its person may look at the dialog for a
    /// while, and asking again would show a second one.
    static let answerWait: Duration = .seconds(300)

    /// How a message reached a device.
    struct Delivery: Sendable {
        /// The device's name and endpoint.
        var label: String
        var endpoint: Endpoint
        /// The certificate it proved; nil over plain HTTP.
        var certificate: Fingerprint?
        /// Whether it showed the message (204) or took it as a text file, uploaded (200).
        var uploaded: Bool
    }

    /// Sends `text` as one LocalSend message to the listed device `peerID` (`localsend:` and its
    /// fingerprint): offered as one text file whose preview is the whole text, then uploaded if
    /// the receiver asks for the file (some take a message so). The device's certificate must be
    /// the one it announced, and hexd shows its persona.
    /// - Throws: `SendError.undelivered` when the device is away, unreachable or busy (worth
    ///   trying again); `.refused` when its person declined or dismissed it, when it took the
    ///   message whole and gave no answer (it may have shown it), or when it never will take it
    ///   from hexd.
    func sendMessage(_ text: String, to peerID: String, timeout: Duration) async throws(SendError) -> Delivery {
        let (device, endpoint, label) = try destination(peerID)
        let bytes = Array(text.utf8)
        let file = LocalSendFile(
            id: UUID().uuidString, fileName: "message.txt", size: Int64(bytes.count), fileType: "text/plain",
            sha256: try? SHA256Digest.hex(of: bytes), preview: text)
        let offer = HTTPRequest(
            method: "POST", path: "/api/localsend/v2/prepare-upload",
            headers: HTTPHeaders([("Content-Type", "application/json")]),
            body: LocalSendUploadRequest(info: ownDevice(announce: nil), files: [file]).encoded())
        let deadline = ContinuousClock.now + timeout
        // Offered again, a message the device's person saw but did not answer would show twice
        // (the app shows each message it is offered: receive_controller.dart).
        let unanswered = SendError.refused(
            "\(label) took the message and gave no answer: its person may have seen it, so hexd does not offer it "
                + "again")
        let answer = try await exchange(
            offer, with: device, at: endpoint, label: label, until: deadline, unanswered: unanswered)
        switch LocalSendAnswer(status: answer.status) {
        case .shown:
            return Delivery(label: label, endpoint: endpoint, certificate: answer.certificate, uploaded: false)
        case .uploadWanted:
            guard let session = LocalSendUploadSession.decode(answer.body) else {
                throw .undelivered("\(label) took the message but its answer names no session")
            }
            guard let token = session.tokens.first(where: { $0.fileID == file.id })?.token else {
                throw .refused("\(label) took nothing of the message (its person left it out)")
            }
            let upload = HTTPRequest(
                method: "POST", path: Self.uploadPath,
                query: ["sessionId": session.sessionID, "fileId": file.id, "token": token],
                headers: HTTPHeaders([("Content-Type", "text/plain")]), body: bytes)
            let uploaded = try await exchange(upload, with: device, at: endpoint, label: label, until: deadline)
            guard uploaded.status == 200 else { throw Self.failure(uploaded.status, from: label, body: uploaded.body) }
            return Delivery(label: label, endpoint: endpoint, certificate: answer.certificate, uploaded: true)
        case .declined:
            // The app shows a message before its person answers, and answers 403 to the back
            // gesture as to a refusal (receive_page.dart): it was seen, and is not offered again.
            throw .refused(
                "the person at \(label) dismissed the message (HTTP 403); the app showed it first, so it was seen")
        case .pinRequired, .busy, .unexpected:
            throw Self.failure(answer.status, from: label, body: answer.body)
        }
    }

    /// A session of hexd's on a device, its files being uploaded.
    struct OutgoingSession: Sendable {
        /// Which: the device's address (only it may cancel the session) and the id it gave.
        struct Key: Hashable, Sendable {
            let address: IPAddress
            let session: String
        }

        /// The upload under way, cancelled with the session.
        var upload: Task<HTTPResponseReader.Response, any Error>?
        var cancelled = false
    }

    /// Sends the files at `paths` to the listed device `peerID`: offered together
    /// (`prepare-upload`), each with its SHA-256 (as LocalSend 1.18 offers them, so that the
    /// receiver checks what lands), then each one the device takes uploaded from disk as it is
    /// read, again when the device got other bytes (`uploadAttempts`). The device's person may
    /// take `answerWait` to answer the offer; each upload has the time its size earns, and stops
    /// at once when the device's person cancels the session. `progress` hears the file being sent
    /// and the bytes sent of all.
    /// - Throws: `SendError` as `sendMessage` does; `.refused` for a path that is no readable file,
    ///   or a session the device's person cancelled.
    package func sendFiles(
        _ paths: [String], to peerID: String, progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> FilesDelivery {
        guard paths.count <= LocalSendUploadRequest.maximumFiles else {
            throw .refused("LocalSend takes at most \(LocalSendUploadRequest.maximumFiles) files at once")
        }
        let (device, endpoint, label) = try destination(peerID)
        // Each file is opened for its size now, and again when its bytes go: a thousand files hold
        // no thousand descriptors through the person's answer.
        var offered: [(path: String, offer: LocalSendFile)] = []
        for path in paths {
            do {
                let file = try DiskFile.reading(path)
                let size = try file.status().size
                let name = String(path.split(separator: "/").last ?? Substring(path))
                offered.append(
                    (
                        path,
                        LocalSendFile(
                            id: UUID().uuidString, fileName: name, size: size, fileType: MediaType.of(fileName: name),
                            sha256: try await FileDigest.sha256(of: file, count: size))
                    ))
            } catch {
                throw .refused("cannot send \(path): \(error)")
            }
        }
        let offer = HTTPRequest(
            method: "POST", path: "/api/localsend/v2/prepare-upload",
            headers: HTTPHeaders([("Content-Type", "application/json")]),
            body: LocalSendUploadRequest(info: ownDevice(announce: nil), files: offered.map(\.offer)).encoded())
        let answer = try await exchange(
            offer, with: device, at: endpoint, label: label, until: .now + Self.answerWait)
        switch LocalSendAnswer(status: answer.status) {
        case .uploadWanted:
            break
        case .shown:
            throw .refused("\(label) took none of the files (HTTP 204)")
        default:
            throw Self.failure(answer.status, from: label, body: answer.body)
        }
        guard let session = LocalSendUploadSession.decode(answer.body) else {
            throw .undelivered("\(label) took the files but its answer names no session")
        }
        let wanted = offered.filter { item in session.tokens.contains { $0.fileID == item.offer.id } }
        let total = wanted.reduce(Int64(0)) { $0 + $1.offer.size }
        let key = OutgoingSession.Key(address: device.address, session: session.sessionID)
        sending[key] = OutgoingSession()
        defer { sending[key] = nil }
        var sent: Int64 = 0
        for (path, offered) in wanted {
            let token = session.tokens.first { $0.fileID == offered.id }?.token ?? ""
            let upload = HTTPRequest(
                method: "POST", path: Self.uploadPath,
                query: ["sessionId": session.sessionID, "fileId": offered.id, "token": token],
                headers: HTTPHeaders([("Content-Type", offered.fileType)]))
            let before = sent
            var attempt = 1
            while true {
                let response = try await self.upload(
                    path, offered, as: upload, in: key, to: device, at: endpoint, label: label
                ) { await progress(offered.fileName, before + $0, total) }
                // As 1.18's sender, as many uploads as its receiver takes (upload_isolate.dart).
                let mismatched = response.status == LocalSendAnswer.checksumMismatch
                if mismatched && attempt < LocalSendAnswer.maximumUploads {
                    attempt += 1
                    continue
                }
                guard response.status == 200 else {
                    guard !mismatched else {
                        throw .refused(
                            "\(label) got \(offered.fileName) with another SHA-256 \(attempt) times (HTTP 422): "
                                + "the file changed while it was read, or the bytes changed on the way")
                    }
                    throw Self.failure(response.status, from: label, body: response.body)
                }
                break
            }
            sent += offered.size
        }
        let (taken, plainHTTP) = (wanted.count, answer.certificate == nil)
        return FilesDelivery(label: label, files: taken, bytes: sent, certificate: answer.certificate) { size in
            "LocalSend took \(taken) of \(paths.count) files (\(size))" + (plainHTTP ? ", over plain HTTP" : "")
        }
    }

    /// Uploads the file at `path`, as `offered`, in hexd's session `session` on `device`: one
    /// attempt, in a task the device's person may cancel (`cancelSending`).
    /// - Throws: `SendError.refused` for a file that is no longer readable or the size offered, or
    ///   a session cancelled; `.undelivered` when the upload stopped.
    private func upload(
        _ path: String, _ offered: LocalSendFile, as request: HTTPRequest, in session: OutgoingSession.Key,
        to device: LocalSendPresence<IPAddress>.Device, at endpoint: Endpoint, label: String,
        progress: @escaping @Sendable (Int64) async -> Void
    ) async throws(SendError) -> HTTPResponseReader.Response {
        let file: DiskFile
        do {
            file = try DiskFile.reading(path)
            guard try file.status().size == offered.size else {
                throw DiskFileError("read \(path)", reason: "it changed size since it was offered")
            }
        } catch {
            throw .refused("cannot send \(path): \(error)")
        }
        let cancelled = SendError.refused("the person at \(label) cancelled the transfer")
        guard sending[session]?.cancelled != true else { throw cancelled }
        let upload = Task { [client] in
            try await client.upload(
                file, size: offered.size, as: request, to: endpoint, over: Self.channel(to: device),
                until: .now + TransferAllowance.forBytes(offered.size), progress: progress)
        }
        sending[session]?.upload = upload
        // hexd stopping (this task cancelled) stops the upload too.
        let result = await withTaskCancellationHandler {
            await upload.result
        } onCancel: {
            upload.cancel()
        }
        sending[session]?.upload = nil
        guard sending[session]?.cancelled != true else { throw cancelled }
        do {
            return try result.get()
        } catch {
            throw .undelivered("\(label): \(offered.fileName) stopped: \(error)")
        }
    }

    /// The device at `address` cancels hexd's session `session` on it (its person cancelled the
    /// transfer): its upload stops at once, and the send says so. False when hexd has no such
    /// session there.
    func cancelSending(_ session: String, from address: IPAddress) -> Bool {
        let key = OutgoingSession.Key(address: address, session: session)
        guard let outgoing = sending[key] else { return false }
        sending[key]?.cancelled = true
        outgoing.upload?.cancel()
        logger.info("the person at \(address) cancelled hexd's transfer (LocalSend session \(session.prefix(12)))")
        return true
    }

    /// The listed device `peerID`, where its API is, and how the user reads it.
    /// - Throws: `SendError.undelivered` when it is not listed (away), `.refused` for a 1.0 device
    ///   or, unless `--localsend-http on`, one whose encryption is off.
    private func destination(_ peerID: String) throws(SendError)
        -> (device: LocalSendPresence<IPAddress>.Device, endpoint: Endpoint, label: String)
    {
        try refuseUnlessAllowed(peerID)
        guard let device = devices.first(where: { $0.peerID == peerID }) else {
            throw .undelivered("\(peerID.prefix(26))… is away: no LocalSend announcement heard from it lately")
        }
        let endpoint = Endpoint(device.address, port: device.description.port ?? LocalSendDevice.defaultPort)
        let label = "\(device.description.alias.clipped(toUTF8: 80)) (\(endpoint))"
        guard !device.description.version.hasPrefix("1.") else {
            throw .refused("\(label) speaks LocalSend \(device.description.version); hexd sends to 2.x devices")
        }
        return (device, endpoint, label)
    }

    /// Refuses a send to `peerID` when it is a device whose encryption is off and hexd is not told
    /// to send such devices anything (`--localsend-http`).
    /// - Throws: `SendError.refused`.
    package nonisolated func refuseUnlessAllowed(_ peerID: String) throws(SendError) {
        guard peerID.isLocalSendHTTPID, !settings.sendsPlainHTTP else { return }
        throw .refused(
            "\(peerID.prefix(40)) has LocalSend's encryption off: what hexd sent it would cross the LAN as plain "
                + "HTTP, to whoever answers at its address. Turn encryption on in its LocalSend settings, or let "
                + "hexd send such devices anything with --localsend-http on")
    }

    /// How a request reaches `device`: TLS pinned to the fingerprint it announced, or plain HTTP
    /// when its encryption is off.
    private nonisolated static func channel(to device: LocalSendPresence<IPAddress>.Device) -> LocalSendClient.Channel {
        device.isPlainHTTP ? .plain : .pinned(device.fingerprint)
    }

    /// The error a refusing status makes (see `LocalSendAnswer`).
    private static func failure(_ status: Int, from label: String, body: [UInt8]) -> SendError {
        switch LocalSendAnswer(status: status) {
        case .declined: .refused("the person at \(label) declined it (HTTP 403)")
        case .pinRequired: .refused("\(label) asks for a PIN before it takes anything (HTTP 401); hexd sends none")
        case .busy: .undelivered("\(label) is busy with another transfer (HTTP \(status))")
        case let answer:
            answer.isWorthRetrying
                ? .undelivered("\(label) answered HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))")
                : .refused("\(label) answered HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
    }

    /// A device's answer, and the certificate it proved (nil over plain HTTP).
    private struct Answer {
        var status: Int
        var body: [UInt8]
        var certificate: Fingerprint?
    }

    /// One request to `device`, answered before `deadline`.
    /// - Parameter unanswered: what a request taken whole but not answered in time is (by
    ///   default, undelivered: worth trying again).
    private nonisolated func exchange(
        _ request: HTTPRequest, with device: LocalSendPresence<IPAddress>.Device, at endpoint: Endpoint,
        label: String, until deadline: ContinuousClock.Instant, unanswered: SendError? = nil
    ) async throws(SendError) -> Answer {
        let certificate = device.isPlainHTTP ? nil : Fingerprint(hex: device.fingerprint)
        guard certificate != nil || device.isPlainHTTP else {
            throw .refused("\(label) announces a fingerprint that is not a SHA-256")
        }
        let remaining = deadline - .now
        guard remaining > .zero else { throw .undelivered("\(label) did not answer in time") }
        do {
            let response = try await client.send(
                request, to: endpoint, over: Self.channel(to: device), answerLimit: 65_536, timeout: remaining)
            return Answer(status: response.status, body: response.body, certificate: certificate)
        } catch .unanswered(let why) {
            throw unanswered ?? .undelivered("\(label): \(why)")
        } catch {
            // An impostor at the device's address is sent nothing, and may be gone next time.
            throw .undelivered("\(label): \(error)")
        }
    }
}

extension LocalSendCarrier: SendingCarrier {
    package static let idForms = LocalSendID.forms

    /// A device's person may take minutes to answer, and asking again shows a second dialog: an
    /// attempt waits `answerWait`, whoever waits for it.
    package static func attemptTimeout(asked: Duration) -> Duration { max(asked, answerWait) }

    package func target(named text: String) -> CarrierTarget? {
        device(matching: text).map {
            CarrierTarget(peerID: $0.peerID, label: $0.description.alias)
        }
    }

    /// Delivers a hex or an alert to the device `peerID` as one message (its text, as
    /// `ForeignMessage.text(of:)` writes a hex), and waits for its answer.
    package func deliver(_ envelope: Envelope, to peerID: String, timeout: Duration) async throws(SendError)
        -> CarrierReceipt
    {
        let text = if let hex = envelope.hex { ForeignMessage.text(of: hex) } else { envelope.message }
        guard let text else {
            throw .refused("a hex with neither a description nor a link shows nothing on a LocalSend device")
        }
        let start = ContinuousClock.now
        let sent = try await sendMessage(text, to: peerID, timeout: timeout)
        let elapsed = ContinuousClock.now - start
        let how =
            (sent.uploaded ? "taken as a text file, uploaded" : "shown")
            + (sent.certificate == nil ? ", over plain HTTP" : "")
        logger.info(
            "message to \(sent.label): \(how) in \(Int(clamping: elapsed.inSeconds * 1_000)) ms",
            [("peer", sent.label), ("messageID", envelope.messageID ?? ""), ("status", "received")])
        let delivery = EnvelopeDelivery(
            status: .received, message: "LocalSend message \(how)", elapsed: elapsed, peerKey: sent.certificate,
            endpoint: sent.endpoint)
        return CarrierReceipt(peer: sent.label, messageID: envelope.messageID, delivery: delivery)
    }
}
