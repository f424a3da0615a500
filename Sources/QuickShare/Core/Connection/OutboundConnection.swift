/// The sending side of one Quick Share connection as a pure machine, in the order and with the
/// fields NearDrop's `OutboundNearbyConnection` uses with Android: the connection request (with
/// the medium and keep-alive fields Android 14 wants), UKEY2, this side's connection response first,
/// the paired-key exchange, the introduction, and once the receiver accepts, the texts as BYTES
/// payloads and the files as FILE payloads the driver reads chunk by chunk.
public struct OutboundConnection: Sendable {
    public enum Action: Sendable, Equatable {
        /// Write one frame (its bytes, without the length prefix).
        case send([UInt8])
        /// The receiver accepted: send each file's bytes through `fileChunk(index:bytes:last:)`, in order.
        case sendFiles
        /// The receiver turned the offer down (or could not take it).
        case declined(SharingFrame.Response)
        /// Every payload was written and the receiver said goodbye: what Quick Share confirms.
        case delivered
        /// The connection cannot go on: close once the frames are written.
        case close(reason: String)
    }

    private enum Phase: Sendable {
        case serverInit
        case connectionResponse
        case pairedKeyEncryption
        case pairedKeyResult
        case response
        case sending
        case sent
        case closed

        var isClosed: Bool {
            if case .closed = self { return true }
            return false
        }

        var isPastIntroduction: Bool {
            switch self {
            case .sending, .sent: return true
            default: return false
            }
        }
    }

    /// Chunks of a file, as Android and NearDrop send them.
    public static let chunkBytes = 512 << 10
    /// Android 14's keep-alive timing in its own connection requests (rquickshare `outbound.rs`).
    static let keepAliveIntervalMillis: Int32 = 5_000
    static let keepAliveTimeoutMillis: Int32 = 30_000

    private let share: OutgoingShare
    private let limits: InboundLimits
    private var handshake: UKEY2Client
    private var channel: SecureChannel?
    private var phase = Phase.serverInit
    private var framesRead = 0
    private var payloadIDs: (texts: [Int64], files: [Int64]) = ([], [])
    private var fileOffsets: [Int64] = []
    private var payloads: PayloadAssembler
    /// The PIN both sides show, once the handshake is done.
    public private(set) var pin: String?

    /// - Parameters:
    ///   - share: what is offered.
    ///   - keyPair: this side's UKEY2 key, used once; `random`: 32 random bytes for the `ClientInit`.
    public init(
        share: OutgoingShare, keyPair: P256KeyPair, random: [UInt8], limits: InboundLimits = InboundLimits()
    ) {
        self.share = share
        self.limits = limits
        handshake = UKEY2Client(keyPair: keyPair, random: random)
        payloads = PayloadAssembler(maximumBytes: limits.textBytes)
    }

    /// The frames that open the connection: the request, then UKEY2's `ClientInit`, from the device
    /// `endpointID` (4 characters) that `info` describes.
    public func opening(endpointID: [UInt8], info: EndpointInfo) -> [Action] {
        let request = OfflineFrame.connectionRequest(
            .init(
                endpointID: String(decoding: endpointID.prefix(4), as: UTF8.self), endpointName: info.name,
                endpointInfo: info.bytes,
                mediums: [OfflineFrame.ConnectionRequest.wifiLAN],
                keepAliveIntervalMillis: Self.keepAliveIntervalMillis,
                keepAliveTimeoutMillis: Self.keepAliveTimeoutMillis))
        return [.send(request.protobuf), .send(handshake.clientInit)]
    }

    /// Whether the channel is secure, so keep-alives can be sent.
    public var isSecure: Bool { channel != nil }

    /// Reads one frame the receiver wrote.
    public mutating func receive(_ frame: [UInt8]) -> [Action] {
        framesRead += 1
        guard framesRead <= limits.framesBeforeIntroduction || phase.isPastIntroduction else {
            return close("over \(limits.framesBeforeIntroduction) frames before the receiver answered")
        }
        switch phase {
        case .serverInit:
            do {
                let (finish, keys) = try handshake.finish(answering: frame)
                pin = keys.pin
                channel = SecureChannel(keys: keys.channelKeys(as: .client))
                phase = .connectionResponse
                return [.send(finish), .send(OfflineFrame.connectionResponse(.init(accepted: true)).protobuf)]
            } catch {
                phase = .closed
                return (error.alert.map { [Action.send($0)] } ?? []) + [.close(reason: error.reason)]
            }
        case .connectionResponse:
            if let refusal = PairedKeyStep.refusal(ofConnectionResponse: frame, from: "receiver") {
                return close(refusal)
            }
            phase = .pairedKeyEncryption
            return bytesPayload(PairedKeyStep.frame)
        case .closed:
            return []
        default:
            return secureFrame(frame)
        }
    }

    /// The next bytes of the file at `index` (at most `chunkBytes`), `last` with its final bytes.
    public mutating func fileChunk(index: Int, bytes: [UInt8], last: Bool) -> [Action] {
        guard case .sending = phase, share.files.indices.contains(index) else { return [] }
        let file = share.files[index]
        let offset = fileOffsets[index]
        guard Int64(bytes.count) <= file.size - offset, !last || offset + Int64(bytes.count) == file.size else {
            return close("\(file.name) changed size while it was sent")
        }
        let id = payloadIDs.files[index]
        var frames: [OfflineFrame] = []
        if !bytes.isEmpty {
            frames.append(
                .payloadTransfer(
                    .init(
                        payloadID: id, kind: .file, totalSize: file.size, fileName: file.name, offset: offset,
                        body: bytes[...])))
            fileOffsets[index] = offset + Int64(bytes.count)
        }
        if last {
            frames.append(
                .payloadTransfer(
                    .init(
                        payloadID: id, kind: .file, totalSize: file.size, fileName: file.name,
                        flags: PayloadTransfer.lastChunkFlag, offset: file.size, body: [])))
            if index == share.files.count - 1 { phase = .sent }
        }
        let actions = sealed(frames)
        return actions
    }

    /// The receiver closed the connection: delivered when everything was sent (pyquickshare closes
    /// without a goodbye once it has the last payload), else not.
    public mutating func peerClosed() -> [Action] {
        let everythingWent: Bool
        if case .sent = phase { everythingWent = true } else { everythingWent = false }
        guard !phase.isClosed else { return [] }
        phase = .closed
        return [everythingWent ? .delivered : .close(reason: "the receiver closed the connection first")]
    }

    /// A keep-alive to send; the receiver ends a connection that sent none for a while.
    public mutating func keepAlive() -> [Action] {
        guard isSecure, !phase.isClosed else { return [] }
        return sealed([.keepAlive(.init(ack: false))])
    }

    private mutating func secureFrame(_ frame: [UInt8]) -> [Action] {
        let offline: OfflineFrame
        do { offline = try channel.open(frame) } catch { return close(error.description) }
        switch offline {
        case .keepAlive(let keepAlive):
            return keepAlive.ack ? [] : sealed([.keepAlive(.init(ack: true))])
        case .disconnection:
            let everythingWent: Bool
            if case .sent = phase { everythingWent = true } else { everythingWent = false }
            phase = .closed
            return [everythingWent ? .delivered : .close(reason: "the receiver left before everything was sent")]
        case .payloadTransfer(let transfer):
            guard transfer.kind == .bytes, transfer.packetType == PayloadTransfer.data else { return [] }
            return bytesChunk(transfer)
        case .connectionRequest, .connectionResponse, .other:
            return []
        }
    }

    private mutating func bytesChunk(_ transfer: PayloadTransfer) -> [Action] {
        // A sharing frame and one of pyquickshare's keep-alives may be under way at once.
        let whole: [UInt8]
        do {
            guard let bytes = try payloads.take(transfer, room: 2) else { return [] }
            whole = bytes
        } catch {
            return close("the receiver's payloads: \(error)")
        }
        guard let frame = try? SharingFrame(protobuf: whole) else { return [] }
        return sharingFrame(frame)
    }

    private mutating func sharingFrame(_ frame: SharingFrame) -> [Action] {
        switch (phase, frame) {
        case (_, .cancel):
            phase = .closed
            return [.close(reason: "the receiver cancelled")]
        case (.pairedKeyEncryption, .pairedKeyEncryption):
            phase = .pairedKeyResult
            return bytesPayload(.pairedKeyResult(.unable))
        case (.pairedKeyResult, .pairedKeyResult):
            phase = .response
            return bytesPayload(.introduction(introduction()))
        case (.response, .response(let status)):
            guard status == .accept else {
                phase = .closed
                return [.declined(status)]
            }
            return accepted()
        default:
            return []
        }
    }

    private mutating func introduction() -> Introduction {
        payloadIDs = (
            share.texts.map { _ in Int64.random(in: 1...Int64.max) },
            share.files.map { _ in Int64.random(in: 1...Int64.max) }
        )
        fileOffsets = share.files.map { _ in 0 }
        let texts = zip(share.texts, payloadIDs.texts).map { text, id in
            TextMetadata(
                title: text.title, kind: text.kind, payloadID: id, size: Int64(text.text.utf8.count),
                id: Int64.random(in: 1...Int64.max))
        }
        let files = zip(share.files, payloadIDs.files).map { file, id in
            FileMetadata(
                name: file.name, payloadID: id, size: file.size, mimeType: file.mimeType,
                id: Int64.random(in: 1...Int64.max))
        }
        return Introduction(files: files, texts: texts)
    }

    private mutating func accepted() -> [Action] {
        var actions: [Action] = []
        for (text, id) in zip(share.texts, payloadIDs.texts) {
            actions += bytesPayload(Array(text.text.utf8), id: id)
        }
        guard share.files.isEmpty else {
            phase = .sending
            return actions + [.sendFiles]
        }
        phase = .sent
        return actions
    }

    private mutating func bytesPayload(_ frame: SharingFrame) -> [Action] {
        bytesPayload(frame.protobuf, id: Int64.random(in: 1...Int64.max))
    }

    private mutating func bytesPayload(_ bytes: [UInt8], id: Int64) -> [Action] {
        sealed(OfflineFrame.bytesPayload(bytes, id: id))
    }

    /// `frames` sealed, to send; the end of the connection when the channel cannot seal them.
    private mutating func sealed(_ frames: [OfflineFrame]) -> [Action] {
        guard let sealed = channel.seal(frames) else { return close("the secure channel could not seal a frame") }
        return sealed.map { .send($0) }
    }

    private mutating func close(_ reason: String) -> [Action] {
        phase = .closed
        return [.close(reason: reason)]
    }
}
