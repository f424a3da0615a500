/// The receiving side of one Quick Share connection as a pure machine: frames in, frames to send
/// and what arrived out. It follows the order NearDrop's `InboundNearbyConnection` and rquickshare's
/// `inbound.rs` take with Android: the connection request, UKEY2, the connection responses in clear,
/// then, sealed, the paired-key exchange (answered "unable"), the introduction, the answer, and the
/// payloads. Every frame is checked against its phase and the limits; anything else ends the
/// connection with a reason. The driver supplies the bytes, the person's answer and a keep-alive
/// every ten seconds, and applies the deadlines.
public struct InboundConnection: Sendable {
    public enum Action: Sendable, Equatable {
        /// Write one frame (its bytes, without the length prefix).
        case send([UInt8])
        /// Ask whether to take the offer; answer with `answer(accept:)`.
        case ask(ShareOffer)
        case deliver(ShareDelivery)
        /// Everything accepted arrived and the goodbye is sent: close once the frames are written.
        case finish
        /// The connection cannot go on: close once the frames are written.
        case close(reason: String)
    }

    private enum Phase: Sendable {
        case connectionRequest
        case clientInit
        case clientFinish
        case connectionResponse
        case pairedKeyEncryption
        case pairedKeyResult
        case introduction
        case answer(ShareOffer, Introduction)
        case receiving
        case closed

        var isReceiving: Bool {
            if case .receiving = self { return true }
            return false
        }
    }

    private struct PendingFile: Sendable {
        let index: Int
        let size: Int64
        var received: Int64 = 0
    }

    public let limits: InboundLimits
    private var phase = Phase.connectionRequest
    private var handshake: UKEY2Server
    private var channel: SecureChannel?
    private var sender: EndpointInfo?
    private var pin = ""
    private var framesRead = 0
    /// BYTES payloads being put together.
    private var payloads: PayloadAssembler
    private var pendingTexts: [Int64: TextMetadata.Kind] = [:]
    private var pendingFiles: [Int64: PendingFile] = [:]
    /// The offer's file whose bytes come now: Android sends them one after another, so one file is
    /// written at a time (one descriptor, not one per file offered).
    private var currentFile = 0

    /// - Parameters:
    ///   - keyPair: this side's UKEY2 key, used once.
    ///   - random: 32 random bytes for the `ServerInit`.
    public init(keyPair: P256KeyPair, random: [UInt8], limits: InboundLimits = InboundLimits()) {
        handshake = UKEY2Server(keyPair: keyPair, random: random)
        self.limits = limits
        payloads = PayloadAssembler(maximumBytes: limits.textBytes)
    }

    /// Whether the channel is secure, so keep-alives can be sent.
    public var isSecure: Bool { channel != nil }

    /// Reads one frame the sender wrote.
    public mutating func receive(_ frame: [UInt8]) -> [Action] {
        framesRead += 1
        switch phase {
        case .connectionRequest:
            return connectionRequest(frame)
        case .clientInit:
            do {
                let serverInit = try handshake.serverInit(answering: frame)
                phase = .clientFinish
                return [.send(serverInit)]
            } catch {
                return fail(error)
            }
        case .clientFinish:
            return clientFinish(frame)
        case .closed:
            return []
        default:
            return secureFrame(frame)
        }
    }

    /// The answer to the offer the last `ask` gave: accepted, its payloads are taken; refused, the
    /// sender is told and the connection ends.
    public mutating func answer(accept: Bool) -> [Action] {
        guard case .answer(_, let introduction) = phase else { return [] }
        guard accept else {
            return bytesPayload(.response(.reject)) + goodbye(.close(reason: "the offer was declined"))
        }
        for text in introduction.texts { pendingTexts[text.payloadID] = text.kind }
        for (index, file) in introduction.files.enumerated() {
            pendingFiles[file.payloadID] = PendingFile(index: index, size: file.size)
        }
        phase = .receiving
        return bytesPayload(.response(.accept))
    }

    /// A keep-alive to send; Android ends a connection that sent none for a while.
    public mutating func keepAlive() -> [Action] {
        guard isSecure, !isClosed else { return [] }
        return sealed([.keepAlive(.init(ack: false))])
    }

    private var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    private mutating func connectionRequest(_ frame: [UInt8]) -> [Action] {
        guard frame.count <= limits.frameBytes,
            case .connectionRequest(let request) = try? OfflineFrame(protobuf: frame)
        else { return close("the first frame is not a connection request") }
        sender = EndpointInfo(request.endpointInfo)
        phase = .clientInit
        return []
    }

    private mutating func clientFinish(_ frame: [UInt8]) -> [Action] {
        let keys: UKEY2Keys
        do { keys = try handshake.keys(finishing: frame) } catch { return fail(error) }
        pin = keys.pin
        channel = SecureChannel(keys: keys.channelKeys(as: .server))
        phase = .connectionResponse
        // Ours goes first: a sender that waits for it before sending its own would otherwise wait forever.
        return [.send(OfflineFrame.connectionResponse(.init(accepted: true)).protobuf)]
    }

    private mutating func secureFrame(_ frame: [UInt8]) -> [Action] {
        if case .connectionResponse = phase {
            if let refusal = PairedKeyStep.refusal(ofConnectionResponse: frame, from: "sender") {
                return close(refusal)
            }
            phase = .pairedKeyEncryption
            return bytesPayload(PairedKeyStep.frame)
        }
        // Keep-alives and stray payloads may come while the sender offers and the person answers, a
        // few dozen frames at most; only files take more.
        if !phase.isReceiving, framesRead > limits.framesBeforeIntroduction {
            return close("over \(limits.framesBeforeIntroduction) frames before the payloads")
        }
        let offline: OfflineFrame
        do { offline = try channel.open(frame) } catch { return close(error.description) }
        switch offline {
        case .keepAlive(let keepAlive):
            return keepAlive.ack ? [] : sealed([.keepAlive(.init(ack: true))])
        case .disconnection:
            return closeAfterDisconnection()
        case .payloadTransfer(let transfer):
            return payload(transfer)
        case .connectionRequest, .connectionResponse, .other:
            // Bandwidth upgrades and the like: stock senders offer none unasked, and a LAN needs none.
            return []
        }
    }

    private mutating func closeAfterDisconnection() -> [Action] {
        phase = .closed
        guard pendingFiles.isEmpty, pendingTexts.isEmpty else {
            return [.close(reason: "the sender left before everything arrived")]
        }
        return [.close(reason: "the sender said goodbye")]
    }

    private mutating func payload(_ transfer: PayloadTransfer) -> [Action] {
        if transfer.packetType == PayloadTransfer.control {
            let known = pendingFiles[transfer.payloadID] != nil || pendingTexts[transfer.payloadID] != nil
            return known ? close("the sender cancelled a payload") : []
        }
        switch transfer.kind {
        case .bytes: return bytesChunk(transfer)
        case .file: return fileChunk(transfer)
        case .stream, nil: return close("a payload of a kind hexd does not take")
        }
    }

    private mutating func bytesChunk(_ transfer: PayloadTransfer) -> [Action] {
        // The offer's texts, a sharing frame and one of pyquickshare's keep-alives may be under way at
        // once; a sender that opens more payloads than that is refused, empty ones too.
        let whole: [UInt8]
        do {
            guard let bytes = try payloads.take(transfer, room: pendingTexts.count + 2) else { return [] }
            whole = bytes
        } catch {
            return close(error.description)
        }
        if let kind = pendingTexts.removeValue(forKey: transfer.payloadID) {
            guard let text = String(validating: whole, as: UTF8.self) else { return close("a text that is not UTF-8") }
            return [.deliver(.text(kind, text))] + finishIfDone()
        }
        // Not a text of the offer: a sharing frame, or something to ignore (pyquickshare 0.1.0 sends
        // its keep-alives as BYTES payloads).
        guard let sharing = try? SharingFrame(protobuf: whole) else { return [] }
        return sharingFrame(sharing)
    }

    private mutating func fileChunk(_ transfer: PayloadTransfer) -> [Action] {
        guard case .receiving = phase, var file = pendingFiles[transfer.payloadID] else {
            return close("a file payload that was not offered or accepted")
        }
        guard file.index == currentFile else { return close("a file's bytes came before the file offered before it") }
        guard transfer.offset == file.received || transfer.body.isEmpty else {
            return close("a file's chunk is out of order")
        }
        let count = Int64(transfer.body.count)
        guard count <= file.size - file.received else { return close("a file is larger than its offer said") }
        var actions: [Action] = []
        if count > 0 {
            actions.append(.deliver(.fileBytes(index: file.index, offset: file.received, bytes: transfer.body)))
            file.received += count
        }
        guard transfer.isLastChunk else {
            pendingFiles[transfer.payloadID] = file
            return actions
        }
        guard file.received == file.size else { return actions + close("a file ended short of its offer") }
        pendingFiles[transfer.payloadID] = nil
        currentFile += 1
        return actions + [.deliver(.fileEnded(index: file.index))] + finishIfDone()
    }

    private mutating func sharingFrame(_ frame: SharingFrame) -> [Action] {
        switch (phase, frame) {
        case (_, .cancel):
            return goodbye(.close(reason: "the sender cancelled"))
        case (.pairedKeyEncryption, .pairedKeyEncryption):
            phase = .pairedKeyResult
            return bytesPayload(.pairedKeyResult(.unable))
        case (.pairedKeyResult, .pairedKeyResult):
            phase = .introduction
            return []
        case (.introduction, .introduction(let introduction)):
            return introduce(introduction)
        default:
            // pyquickshare sends frames Android would not; one hexd does not expect is ignored.
            return []
        }
    }

    private mutating func introduce(_ introduction: Introduction) -> [Action] {
        let ids = introduction.texts.map(\.payloadID) + introduction.files.map(\.payloadID)
        guard introduction.otherAttachments == 0, !ids.isEmpty else {
            return bytesPayload(.response(.unsupportedAttachmentType))
                + goodbye(.close(reason: "an offer of Wi-Fi credentials, apps or streams"))
        }
        let (_, overflows) = introduction.files.reduce((Int64(0), false)) { sum, file in
            let (total, overflow) = sum.0.addingReportingOverflow(file.size)
            return (total, sum.1 || overflow)
        }
        guard introduction.excess == 0, introduction.files.count <= limits.files, Set(ids).count == ids.count,
            introduction.files.allSatisfy({ $0.size >= 0 }), !overflows,
            introduction.texts.allSatisfy({ (0...Int64(limits.textBytes)).contains($0.size) })
        else {
            return bytesPayload(.response(.reject)) + goodbye(.close(reason: "an offer hexd cannot take"))
        }
        let offer = ShareOffer(
            senderName: sender?.name, deviceType: sender?.deviceType ?? .unknown, pin: pin,
            texts: introduction.texts.map { .init(kind: $0.kind, title: $0.title, size: $0.size) },
            files: introduction.files.map { .init(name: $0.name, size: $0.size, mimeType: $0.mimeType) })
        phase = .answer(offer, introduction)
        return [.ask(offer)]
    }

    private mutating func finishIfDone() -> [Action] {
        guard pendingFiles.isEmpty, pendingTexts.isEmpty else { return [] }
        return goodbye(.finish)
    }

    /// The disconnection frame, then `last`.
    private mutating func goodbye(_ last: Action) -> [Action] {
        let frames = sealed([.disconnection(.init())])
        phase = .closed
        return frames + [last]
    }

    /// A sharing frame as a BYTES payload: one chunk with the bytes, then an empty last chunk.
    private mutating func bytesPayload(_ frame: SharingFrame) -> [Action] {
        sealed(OfflineFrame.bytesPayload(frame.protobuf, id: Int64.random(in: 1...Int64.max)))
    }

    /// `frames` sealed, to send; the end of the connection when the channel cannot seal them.
    private mutating func sealed(_ frames: [OfflineFrame]) -> [Action] {
        guard let sealed = channel.seal(frames) else { return close("the secure channel could not seal a frame") }
        return sealed.map { .send($0) }
    }

    private mutating func fail(_ failure: UKEY2Failure) -> [Action] {
        phase = .closed
        return (failure.alert.map { [Action.send($0)] } ?? []) + [.close(reason: failure.reason)]
    }

    private mutating func close(_ reason: String) -> [Action] {
        phase = .closed
        return [.close(reason: reason)]
    }
}
