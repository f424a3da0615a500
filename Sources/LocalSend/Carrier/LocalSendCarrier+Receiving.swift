import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import HexWeb
import LocalSendCore

/// What LocalSend devices send hexd: a message (a note or a link: one text file with its whole
/// text as the preview, as the app makes one) becomes a hex at once; any other offer is files,
/// admitted whole before a byte is written, uploaded into the downloads folder, and made one hex
/// that links to them once the session ends (a lone short text file lends it its first line and
/// its addresses).
extension LocalSendCarrier {
    /// Who sent an upload: its description, and what TLS proved of it.
    struct Sender: Sendable {
        let alias: String
        let version: String
        let proof: SenderProof
        /// The device's ID, when its certificate proved it.
        let id: String?
        /// Its IP address, and how the log names it.
        let address: String
        let remote: String

        /// Nil when the device showed a certificate other than the one it claims (LocalSend 1.18
        /// shows its own; another is a lie). One that shows none (an app before 1.18) is no proof.
        init?(_ info: LocalSendDevice, certificate: Fingerprint?, address: IPAddress, remote: Endpoint?) {
            (alias, version) = (info.alias, info.version)
            (self.address, self.remote) = (address.description, remote?.description ?? address.description)
            guard let certificate else {
                (proof, id) = (.none, nil)
                return
            }
            guard certificate.isClaimed(by: info.fingerprint),
                let id = LocalSendID.certified.id(info.fingerprint)
            else { return nil }
            (proof, self.id) = (.key(fingerprint: certificate.description, deviceID: id), id)
        }
    }

    /// What a session was prepared for: who offered, and whether its lone file is a short text
    /// file whose text describes the hex its files make.
    struct Offer: Sendable {
        let sender: Sender
        let isDescribingText: Bool
    }

    /// A device offers something: a message is kept at once (`204`); files are admitted by the
    /// rules every peer's hexes are (the accept policy, blocks, the budgets, which count their
    /// bytes) and by the downloads folder's free space, before a session is opened for them.
    /// LocalSend 1.18 calls an offer a message only when its one text file has a preview
    /// (`receive_session_state.dart`, `message`): a picked `notes.txt` is a file, kept as one.
    func prepareUpload(_ request: HTTPRequest, from remote: Endpoint?, certificate: Fingerprint?) async -> HTTPResponse
    {
        guard let address = remote?.address else { return .text(.badRequest, "no address to answer") }
        let verdict = pinGate.check(request.query["pin"], from: address, at: .now)
        switch verdict {
        case .pass: break
        case .required: return .text(HTTPStatus(verdict.status, "Unauthorized"), "PIN required")
        case .wrong: return .text(HTTPStatus(verdict.status, "Unauthorized"), "Invalid PIN")
        case .locked: return .text(HTTPStatus(verdict.status, "Too Many Requests"), "too many wrong PINs; try later")
        }
        guard let upload = LocalSendUploadRequest.decode(request.body) else {
            return .text(.badRequest, "the body is not a LocalSend prepare-upload request (at most 1,000 files)")
        }
        guard let sender = Sender(upload.info, certificate: certificate, address: address, remote: remote) else {
            return .text(.forbidden, "the client certificate is not the one the device claims")
        }
        // A device paired before: its address gets its handshakes whatever strangers do.
        if let id = sender.id, let certificate, await intake.hasPaired(id, byKey: certificate.description) {
            gate.markKnown(address)
        }
        if let text = upload.message {
            let hex = ForeignMessage.localSend.hex(text, from: sender.alias, senderID: sender.id)
            if let refusal = await admit(bytes: Self.charge(of: hex), from: sender, offering: "a message") {
                return logged(refusal, of: sender)
            }
            return await keep(text, from: sender, answering: .noContent)
        }
        let isDescribingText =
            upload.files.count == 1 && upload.files.allSatisfy { $0.isText && $0.size <= Self.describingTextBytes }
        if let refusal = await admit(upload.files, from: sender, describingText: isDescribingText) {
            return logged(refusal, of: sender)
        }
        await keepEndedSessions()
        // A sender that gave up while the person was asked opens no session (no one would use it,
        // and it would keep others waiting).
        guard !Task.isCancelled else { return .text(.forbidden, "the device gave up its offer") }
        let files = upload.files.map { (token: UUID().uuidString, file: $0) }
        let session: LocalSendReception<IPAddress, Offer>.Session
        do {
            session = try reception.prepare(
                id: UUID().uuidString, files: files, from: address,
                sender: Offer(sender: sender, isDescribingText: isDescribingText), at: .now)
        } catch {
            return .text(HTTPStatus(error.status, "Conflict"), "another device is sending to hexd; try again soon")
        }
        received[session.id] = (session.sender, [])
        // Made, and cleared of stale partial files, once for each session: on the pool, as it
        // lists the folder.
        do {
            try await BlockingPool.shared.run { [folder = downloads.folder] in try folder.prepare() }
        } catch {
            _ = reception.cancel(session: session.id, from: address)
            received[session.id] = nil
            return .text(HTTPStatus(500, "Internal Server Error"), "cannot make \(downloads.folder.path): \(error)")
        }
        let tokens = files.map { (fileID: $0.file.id, token: $0.token) }
        return HTTPResponse(
            .ok, contentType: "application/json",
            body: LocalSendUploadSession(sessionID: session.id, tokens: tokens).encoded())
    }

    /// `refusal`, said in the log, a few lines a window at most (a refused sender may keep asking).
    private func logged(_ refusal: HTTPResponse, of sender: Sender) -> HTTPResponse {
        logger.limited(
            "localsend refused", .info,
            "refused what \(sender.alias.clipped(toUTF8: 80)) (\(sender.remote)) offered: HTTP \(refusal.status.code) "
                + String(decoding: refusal.body.prefix(300), as: UTF8.self))
        return refusal
    }

    /// Why `files` from `sender` are refused before a byte of them is written; nil when they
    /// may come: names that climb out of the folder, more bytes than the folder's disk has above
    /// its floor, or a hex that `HexManager` would refuse (see `admit(bytes:from:offering:)`).
    /// - Parameter describingText: the lone file is a short text file, whose first line and
    ///   addresses the hex will hold too: its bytes are counted twice more.
    private func admit(_ files: [LocalSendFile], from sender: Sender, describingText: Bool) async -> HTTPResponse? {
        if let climbing = files.first(where: { Self.climbs($0.fileName) }) {
            return .text(.badRequest, "the file name \(climbing.fileName.clipped(toUTF8: 80)) leaves its folder")
        }
        let total = files.reduce(Int64(0)) { sum, file in
            let (next, overflow) = sum.addingReportingOverflow(file.size)
            return overflow ? .max : next
        }
        if let problem = downloads.roomProblem(for: total) {
            return .text(HTTPStatus(507, "Insufficient Storage"), problem)
        }
        // The hex the files will make counts too, its links to where they will land.
        let landing = files.map { file in
            let name = SafeFileName.make(from: file.fileName)
            return (name: name, path: downloads.folder.path + "/" + name)
        }
        let hex = ForeignMessage.localSend.hex(files: landing, from: sender.alias, senderID: sender.id)
        // Only a file of at most `describingTextBytes` describes: twice its size cannot overflow.
        let text = describingText ? total * 2 : 0
        let (charge, overflow) = total.addingReportingOverflow(Self.charge(of: hex) + text)
        let what = files.count == 1 ? "a file" : "\(files.count) files"
        let offering = "\(what), \(ByteCount.text(Int(clamping: total)))"
        if let refusal = await admit(bytes: overflow ? .max : charge, from: sender, offering: offering) {
            return refusal
        }
        // The person may have taken a minute: the disk is asked again.
        return downloads.roomProblem(for: total).map { .text(HTTPStatus(507, "Insufficient Storage"), $0) }
    }

    /// What `hex` counts against its sender's budgets once stored (its files aside).
    private static func charge(of hex: HexJM) -> Int64 {
        Int64(HexManager.makeHex(from: hex, location: .inbox, at: Date()).storedBytes)
    }

    /// Why an offer of `bytes` from `sender` is refused, as `HexManager` rules (the accept policy,
    /// blocks, the budgets); nil when it may come. An offer the person may let in (a device the
    /// policy does not take, or a stranger past the budgets) waits for their yes first
    /// (`askPerson`), which pairs the device.
    private func admit(bytes: Int64, from sender: Sender, offering what: String) async -> HTTPResponse? {
        do {
            let asked = try await intake.store.admission(
                of: sender.id ?? "", proof: sender.proof, from: sender.address, bytes: Int(clamping: bytes))
            switch asked {
            case .admitted:
                return nil
            case .refused(let outcome):
                return Self.answer(refusing: outcome)
            case .askPerson(let outcome):
                if let why = await askPerson(about: sender, offering: what) {
                    return Self.answer(refusing: outcome, note: why)
                }
                let again = try await intake.store.admission(
                    of: sender.id ?? "", proof: sender.proof, from: sender.address, bytes: Int(clamping: bytes))
                switch again {
                case .admitted: return nil
                case .refused(let outcome), .askPerson(let outcome): return Self.answer(refusing: outcome)
                }
            }
        } catch {
            return .text(HTTPStatus(500, "Internal Server Error"), "\(error)")
        }
    }

    /// Whether a sender's file name is a path that climbs (`../x`) or starts at the root. Any
    /// other folders in it are dropped: files land side by side (`SafeFileName`).
    static func climbs(_ name: String) -> Bool {
        name.hasPrefix("/") || name.hasPrefix("\\")
            || name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).contains { $0 == ".." }
    }

    /// A device sends the bytes of a file it prepared (the request's head read, `first` the bytes
    /// that came with it): it is streamed to the downloads folder, and the session's last one
    /// makes the hex of them all; bytes that are not the SHA-256 offered may come again (`422`). The bytes come sized
    /// (`Content-Length`) or chunked, as LocalSend 1.18 streams them (its core's `upload`).
    /// - Parameter progressed: told as a file's bytes come (its connection is no idle one).
    nonisolated func upload(
        _ request: HTTPRequest, framing: HTTPRequestReader.BodyFraming, first: [UInt8], over connection: TLSConnection,
        from remote: Endpoint?, progressed: @escaping @Sendable () -> Void
    ) async -> HTTPResponse {
        guard request.method == "POST" else { return .text(HTTPStatus(405, "Method Not Allowed"), "POST an upload") }
        // Checked before the token is spent: a sender can send again what it sends right.
        guard request.headers["content-length"] != nil || framing == .chunked else {
            return .text(HTTPStatus(411, "Length Required"), "an upload names its size (Content-Length) or is chunked")
        }
        guard let address = remote?.address, let session = request.query["sessionId"],
            let fileID = request.query["fileId"], let token = request.query["token"]
        else { return .text(.badRequest, "an upload names its sessionId, fileId and token") }
        let (file, offer): (LocalSendFile, Offer)
        do {
            (file, offer) = try await startUpload(session: session, file: fileID, token: token, from: address)
        } catch {
            return .text(HTTPStatus(error.status, "Forbidden"), "\(error)")
        }
        if case .length(let length) = framing, Int64(length) != file.size {
            await endUpload(session: session, file: fileID, saved: nil)
            return .text(.badRequest, "the upload is \(length) bytes, not the \(file.size) announced")
        }
        let deadline = ContinuousClock.now + TransferAllowance.forBytes(file.size)
        do {
            let saved = try await downloads.receive(
                named: file.fileName, size: file.size, sha256: file.sha256, over: connection, first: first,
                chunked: framing == .chunked, deadline: deadline, progressed: progressed
            ) {
                await self.reception.isUploading(session: session, file: fileID)
            }
            return await endUpload(session: session, file: fileID, saved: saved) ?? HTTPResponse(.ok)
        } catch {
            let mismatch = HTTPStatus(LocalSendAnswer.checksumMismatch, "Unprocessable Content")
            if case .digestMismatch(let reason) = error, await mayUploadAgain(session: session, file: fileID) {
                return .text(mismatch, reason)
            }
            await endUpload(session: session, file: fileID, saved: nil)
            logger.limited(
                "localsend upload", .info,
                "an upload from \(offer.sender.alias.clipped(toUTF8: 80)) (\(offer.sender.remote)) stopped: \(error)")
            switch error {
            case .refused(let status, let reason): return .text(HTTPStatus(status, "Refused"), reason)
            case .digestMismatch(let reason): return .text(mismatch, reason)
            case .unreachable(let reason): return .text(.badRequest, reason)
            }
        }
    }

    /// Whether `file`, whose bytes were not the SHA-256 offered, may be uploaded again.
    private func mayUploadAgain(session: String, file: String) -> Bool {
        reception.mismatched(session: session, file: file, at: .now)
    }

    private func startUpload(session: String, file: String, token: String, from address: IPAddress)
        throws(LocalSendReception<IPAddress, Offer>.Refusal) -> (LocalSendFile, Offer)
    {
        let started = try reception.upload(session: session, file: file, token: token, from: address, at: .now)
        return (started.file, started.sender)
    }

    /// The upload of `file` ended, `saved` when it landed whole; when that ended its session, the
    /// session's files become a hex and the answer says how that went (nil: the upload's `200`).
    /// A file that landed after its session ended (cancelled meanwhile) is removed: no hex would
    /// link it, nor any budget count it.
    @discardableResult
    private func endUpload(session: String, file: String, saved: IncomingFiles.Saved?) async -> HTTPResponse? {
        if let saved {
            guard received[session] != nil else {
                DiskFile.remove(saved.path)
                return .text(HTTPStatus(409, "Conflict"), "the session was cancelled")
            }
            received[session]?.files.append(saved)
        }
        guard reception.finished(session: session, file: file, at: .now) else { return nil }
        return await keepFiles(of: session)
    }

    /// Keeps the files of every session that ended without its last upload (cancelled, or idle)
    /// as the hex they make.
    func keepEndedSessions() async {
        for id in received.keys where id != reception.session?.id { await keepFiles(of: id) }
    }

    /// The hex the saved files of session `id` make, kept under the rules every peer's hexes are
    /// (their bytes counted against the sender's budgets); refused, the files are removed.
    @discardableResult
    private func keepFiles(of id: String) async -> HTTPResponse? {
        guard let (offer, files) = received.removeValue(forKey: id), !files.isEmpty else { return nil }
        let sender = offer.sender
        let text = offer.isDescribingText && files.count == 1 ? await Self.text(of: files[0].path) : nil
        let hex = ForeignMessage.localSend.hex(
            files: files.map { ($0.name, $0.path) }, from: sender.alias, senderID: sender.id, text: text)
        let bytes = files.reduce(0) { $0 + Int(clamping: $1.size) }
        let answer = await keep(hex, from: sender, attachedBytes: bytes, answering: .ok)
        if answer.status != .ok {
            for file in files { DiskFile.remove(file.path) }
        }
        logger.info(
            "\(files.count) file(s), \(ByteCount.text(bytes)), from \(sender.alias.clipped(toUTF8: 80)) "
                + "(\(sender.remote)): \(answer.status == .ok ? "in \(downloads.folder.path)" : "refused, removed")")
        return answer
    }

    /// The text of the short text file at `path`, or nil when it is not UTF-8 (or cannot be read):
    /// read on the pool, at most `describingTextBytes`.
    private static func text(of path: String) async -> String? {
        let bytes = try? await BlockingPool.shared.run {
            try DiskFile.reading(path).contents(upTo: describingTextBytes)
        }
        return bytes.flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Keeps `text` from `sender` as a hex (see `keep(_:from:attachedBytes:answering:)`).
    func keep(_ text: String, from sender: Sender, answering taken: HTTPStatus) async -> HTTPResponse {
        await keep(
            ForeignMessage.localSend.hex(text, from: sender.alias, senderID: sender.id), from: sender, attachedBytes: 0,
            answering: taken)
    }

    /// Keeps `hex` from `sender`, under the rules every peer's hexes are kept by, and answers how
    /// that went: `taken` (`204` to a message: nothing to upload; `200` to an upload), `507` no
    /// room, `403` refused.
    private func keep(_ hex: HexJM, from sender: Sender, attachedBytes: Int, answering taken: HTTPStatus) async
        -> HTTPResponse
    {
        let envelope = Envelope.store(hex, versionID: "LocalSend " + sender.version, messageID: UUID().uuidString)
        let outcome = await intake.take(
            [envelope], proof: sender.proof, from: sender.remote, address: sender.address,
            attachedBytes: attachedBytes
        ).first
        switch outcome {
        case .success(.stored), .success(.duplicate):
            return HTTPResponse(taken)
        case .success(let refused):
            return Self.answer(refusing: refused)
        case .failure(let error):
            return .text(HTTPStatus(500, "Internal Server Error"), "\(error)")
        case nil:
            return .text(HTTPStatus(500, "Internal Server Error"), "nothing was stored")
        }
    }

    /// The answer to what `HexManager` refused: `507` for no room, else `403`, saying why (and
    /// `note`, when given).
    static func answer(refusing outcome: ReceiveOutcome, note: String? = nil) -> HTTPResponse {
        let noted = note.map { " (\($0))" } ?? ""
        if case .noRoom(let refusal, _) = outcome {
            return .text(HTTPStatus(507, "Insufficient Storage"), "\(refusal)\(noted)")
        }
        return .text(.forbidden, outcome.explanation + noted)
    }
}
