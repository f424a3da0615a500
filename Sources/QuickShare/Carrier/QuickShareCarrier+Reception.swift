import HexCarrier
import HexKit
import HexNet
import QuickShareCore
import Synchronization

/// One phone's connection: its frames through `InboundConnection`, its timing through
/// `ConnectionTimers`, and what they decide done here.
extension QuickShareCarrier {
    /// What one connection holds while it is served.
    private struct Reception {
        var machine: InboundConnection
        var decoder: FrameDecoder
        var timers: ConnectionTimers
        let remote: String
        let address: String
        /// The offer the sender made, once it did.
        var offer: ShareOffer?
        /// The answer to it, once given (by the policy at once, by the person later).
        let answer = OfferAnswer()
        var asking: Task<Void, Never>?
        /// Files being written, by their index in the offer, and those that landed.
        var landings: [Int: IncomingFiles.Landing] = [:]
        var saved: [IncomingFiles.Saved] = []

        var sender: String { offer?.senderName ?? "a Quick Share device" }
    }

    /// Serves `channel`, a connection from `endpoint`, until its sender is done or gives up, or the
    /// connection fails.
    nonisolated func receive(
        over channel: any ByteChannel, from endpoint: Endpoint?, number: UInt64, progressed: @Sendable () -> Void
    ) async {
        let remote = endpoint?.description ?? "?"
        var reception: Reception
        do {
            reception = Reception(
                machine: InboundConnection(keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32)),
                decoder: FrameDecoder(maximumFrameBytes: InboundLimits().frameBytes),
                timers: ConnectionTimers(opened: .now), remote: remote, address: endpoint?.host ?? "")
        } catch {
            logger.error("Quick Share: cannot serve \(remote): \(error)")
            return
        }
        await exchange(over: channel, &reception, key: "\(Self.offerKeyPrefix)\(number)", progressed: progressed)
        reception.asking?.cancel()
        for landing in reception.landings.values { landing.abandon() }
        // Files that landed whole before the connection ended are kept as the hex they make, as
        // LocalSend's are when its session ends early.
        await keepFiles(of: &reception)
    }

    /// Reads and answers the sender's frames until it is done or gives up, or the connection fails.
    private nonisolated func exchange(
        over channel: any ByteChannel, _ reception: inout Reception, key: String, progressed: @Sendable () -> Void
    ) async {
        let remote = reception.remote
        while true {
            if let answer = reception.answer.take() {
                guard await give(answer, on: channel, &reception, key: key) else { return }
            }
            let wait: Duration
            switch reception.timers.due(at: .now) {
            case .giveUp(let why):
                logger.info("Quick Share: gave up on \(reception.sender) (\(remote)): \(why)")
                return
            case .keepAlive:
                reception.timers.keptAlive(at: .now)
                guard await perform(reception.machine.keepAlive(), on: channel, &reception, key: key) else { return }
                continue
            case .nothing(let until):
                // While the person is asked, the answer is looked for four times a second.
                wait = reception.asking == nil ? until - .now : min(until - .now, .milliseconds(250))
            }
            var fed: Result<[[UInt8]], QuickShareError> = .success([])
            do {
                // The bytes go to the decoder from the read's own buffer.
                let count = try await channel.read(maximumCount: Self.readBytes, timeout: max(wait, .milliseconds(1))) {
                    bytes in fed = Result { () throws(QuickShareError) in try reception.decoder.feed(bytes) }
                }
                guard count > 0 else {
                    if reception.offer != nil { logger.info("Quick Share: \(reception.sender) (\(remote)) left") }
                    return
                }
            } catch let error as SocketError where error.isTimeout {
                continue
            } catch {
                logger.limited("quickshare read", .info, "Quick Share: \(remote): \(error)")
                return
            }
            let frames: [[UInt8]]
            do {
                frames = try fed.get()
            } catch {
                logger.limited("quickshare frame", .info, "Quick Share: \(remote): \(error)")
                return
            }
            reception.timers.heard(at: .now)
            progressed()
            for frame in frames {
                let wasSecure = reception.machine.isSecure
                let actions = reception.machine.receive(frame)
                if !wasSecure, reception.machine.isSecure { reception.timers.keptAlive(at: .now) }
                guard await perform(actions, on: channel, &reception, key: key) else { return }
            }
        }
    }

    /// Does what the machine decided; false once the connection is to end.
    private nonisolated func perform(
        _ actions: [InboundConnection.Action], on channel: any ByteChannel, _ reception: inout Reception, key: String
    ) async -> Bool {
        for action in actions {
            switch action {
            case .send(let frame):
                do {
                    try await channel.write(FrameDecoder.framed(frame), timeout: Self.writeTimeout)
                } catch {
                    logger.limited("quickshare write", .info, "Quick Share: \(reception.remote): \(error)")
                    return false
                }
            case .ask(let offer):
                reception.offer = offer
                reception.timers.asked(at: .now)
                // The rules answer at once (the sender waits for it); only files wait for the person.
                if let refusal = await refusal(of: offer.totalBytes, from: reception.address) {
                    logger.info("Quick Share: refused what \(reception.sender) offered: \(refusal)")
                    guard await give(false, on: channel, &reception, key: key) else { return false }
                } else if offer.files.isEmpty || settings.takesFilesUnasked {
                    guard await give(true, on: channel, &reception, key: key) else { return false }
                } else {
                    reception.asking = askInBackground(about: offer, key: key, into: reception.answer)
                }
            case .deliver(.text(let kind, let text)):
                await keepText(text, of: kind, from: reception)
            case .deliver(.fileBytes(let index, _, let bytes)):
                guard await write(bytes, ofFile: index, &reception) else { return false }
            case .deliver(.fileEnded(let index)):
                guard await land(file: index, &reception) else { return false }
            case .finish:
                await keepFiles(of: &reception)
                return false
            case .close(let reason):
                logger.info("Quick Share: \(reception.sender) (\(reception.remote)): \(reason)")
                return false
            }
        }
        return true
    }

    /// Answers the offer: the machine's answer to the sender, and the payloads' allowance from now.
    private nonisolated func give(_ yes: Bool, on channel: any ByteChannel, _ reception: inout Reception, key: String)
        async
        -> Bool
    {
        reception.asking = nil
        reception.timers.answeredOffer(at: .now, transferring: reception.offer?.totalBytes ?? 0)
        return await perform(reception.machine.answer(accept: yes), on: channel, &reception, key: key)
    }

    /// Asks the person about the files of `offer`, in a task of its own while the connection goes
    /// on (keep-alives come meanwhile); the answer goes into `box`.
    private nonisolated func askInBackground(about offer: ShareOffer, key: String, into box: OfferAnswer)
        -> Task<Void, Never>
    {
        Task { box.give(await askPerson(about: offer, key: key)) }
    }

    /// Why `bytes` from a stranger at `address` are not taken now (the policy, the budgets, the
    /// disk); nil when they are.
    private nonisolated func refusal(of bytes: Int64, from address: String) async -> String? {
        if let refusal = await intake.strangerRefusal(of: bytes, from: address) { return refusal }
        return downloads.roomProblem(for: bytes)
    }

    /// Keeps a text a phone shared as a hex: a URL as a hex of that link (one that is no web address
    /// stays text), any other text as a hex whose description it is, its web addresses its links.
    private nonisolated func keepText(_ text: String, of kind: TextMetadata.Kind, from reception: Reception) async {
        let name = reception.sender
        let hex: HexJM
        // Only a web address is a link: a `file:` one from a phone would point into this machine.
        if kind == .url, ForeignMessage.links(in: text) == [text], let link = LinkURL.parse(text) {
            hex = HexJM(
                senderUUID: nil, senderName: name, hexDescription: nil, hexColor: ForeignMessage.quickShare.color,
                links: [LinkJM(url: text, linkDescription: LinkURL.description(of: link))])
        } else {
            hex = ForeignMessage.quickShare.hex(text, from: name, senderID: nil)
        }
        await keepHex(hex, attachedBytes: 0, from: reception)
    }

    @discardableResult
    private nonisolated func keepHex(_ hex: HexJM, attachedBytes: Int, from reception: Reception) async -> Bool {
        let envelope = Envelope.store(hex, versionID: "Quick Share", messageID: UUID().uuidString)
        return await intake.keepFromStranger(
            envelope, from: reception.remote, address: reception.address, attachedBytes: attachedBytes)
    }

    /// Writes the next bytes of the offer's file `index`, starting it when they are its first.
    private nonisolated func write(_ bytes: ArraySlice<UInt8>, ofFile index: Int, _ reception: inout Reception) async
        -> Bool
    {
        guard let offer = reception.offer, offer.files.indices.contains(index) else { return false }
        do {
            if reception.landings[index] == nil {
                if reception.saved.isEmpty, reception.landings.isEmpty {
                    try await BlockingPool.shared.run { [folder = downloads.folder] in try folder.prepare() }
                }
                let file = offer.files[index]
                reception.landings[index] = try downloads.land(named: file.name, size: file.size, checking: nil)
            }
            guard var landing = reception.landings[index] else { return false }
            try landing.write(bytes)
            try await landing.wrote()
            reception.landings[index] = landing
            return true
        } catch {
            logger.info("Quick Share: a file from \(reception.sender) (\(reception.remote)) stopped: \(error)")
            return false
        }
    }

    /// The offer's file `index` has all its bytes: it gets its name.
    private nonisolated func land(file index: Int, _ reception: inout Reception) async -> Bool {
        // An empty file has no bytes to start it.
        if reception.landings[index] == nil, !(await write([], ofFile: index, &reception)) { return false }
        guard var landing = reception.landings.removeValue(forKey: index) else { return false }
        do {
            reception.saved.append(try await landing.finish())
            return true
        } catch {
            landing.abandon()
            logger.info("Quick Share: a file from \(reception.sender) (\(reception.remote)) did not land: \(error)")
            return false
        }
    }

    /// Keeps the files that landed as the hex naming them; refused, they are removed.
    private nonisolated func keepFiles(of reception: inout Reception) async {
        let files = reception.saved
        guard !files.isEmpty else { return }
        reception.saved = []
        let hex = ForeignMessage.quickShare.hex(
            files: files.map { ($0.name, $0.path) }, from: reception.sender, senderID: nil)
        let bytes = files.reduce(0) { $0 + Int(clamping: $1.size) }
        let kept = await keepHex(hex, attachedBytes: bytes, from: reception)
        if !kept {
            for file in files { DiskFile.remove(file.path) }
        }
        logger.info(
            "Quick Share: \(files.count) file(s), \(ByteCount.text(bytes)), from \(reception.sender) "
                + "(\(reception.remote)): \(kept ? "in \(downloads.folder.path)" : "refused, removed")")
    }
}

/// The answer to a connection's offer, given by the task that decides it and taken by the
/// connection's loop.
final class OfferAnswer: Sendable {
    private let value = Mutex<Bool?>(nil)

    func give(_ yes: Bool) { value.withLock { $0 = yes } }

    /// The answer, once; nil while there is none.
    func take() -> Bool? { value.withLock { $0.take() } }
}
