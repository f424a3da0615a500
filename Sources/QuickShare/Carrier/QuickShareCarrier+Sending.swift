import HexCarrier
import HexEngine
import HexKit
import HexNet
import QuickShareCore

/// Hexes and files to Quick Share receivers DNS-SD found (a phone in its receive screen, Google's
/// Windows app): a lone link goes as a URL, anything else as a text (`ForeignMessage.text(of:)`),
/// files as files, each on a connection of its own through `OutboundConnection`. Quick Share
/// confirms what it took: the receiver's person accepts the offer (the PIN shows on both sides),
/// and "delivered" means every payload was written and the receiver then said goodbye or closed.
extension QuickShareCarrier: SendingCarrier {
    /// How long a receiver's person has to accept: Android waits about as long for its own.
    static let answerWait: Duration = .seconds(60)

    package static let idForms = [QuickShareID.form]

    package static func attemptTimeout(asked: Duration) -> Duration { max(asked, answerWait) }

    package func target(named text: String) -> CarrierTarget? {
        receiver(named: text).flatMap { receiver in
            QuickShareID.of(endpointID: receiver.endpointID).map {
                CarrierTarget(peerID: $0, label: receiver.label)
            }
        }
    }

    /// The receiver listed now that `text` names (`DeviceNaming`): its ID, its endpoint ID's whole
    /// ID (`quickshare:AB12`), or its name.
    private func receiver(named text: String) -> ReceiverTable<IPAddress>.Receiver? {
        let listed = receivers.receivers.values.sorted { $0.endpointID < $1.endpointID }
        return DeviceNaming.device(
            named: text, among: listed, forms: Self.idForms,
            id: { QuickShareID.of(endpointID: $0.endpointID) ?? $0.endpointID }, name: \.label)
    }

    /// Nothing is refused ahead: any receiver takes texts and files, once its person accepts.
    package func refuseUnlessAllowed(_ peerID: String) {}

    package func deliver(_ envelope: Envelope, to peerID: String, timeout: Duration) async throws(SendError)
        -> CarrierReceipt
    {
        let text = if let hex = envelope.hex { ForeignMessage.text(of: hex) } else { envelope.message }
        guard let text, !text.isEmpty else {
            throw .refused("a hex with neither a description nor a link shows nothing on a Quick Share device")
        }
        let isLoneLink = envelope.hex?.links?.compactMap(\.url) == [text]
        let share = OutgoingShare(texts: [.init(kind: isLoneLink ? .url : .text, text: text)])
        let start = ContinuousClock.now
        let sent: Sent
        do {
            sent = try await send(share, files: [], to: peerID, until: start + timeout) { _, _, _ in }
        } catch {
            if case .undelivered = error { await nudge.sendWaits(for: peerID) }
            throw error
        }
        await nudge.sendWent(to: peerID)
        let elapsed = ContinuousClock.now - start
        logger.info(
            "\(isLoneLink ? "link" : "text") to \(sent.label) by Quick Share: accepted (PIN \(sent.pin)) in "
                + "\(Int(clamping: elapsed.inSeconds * 1_000)) ms",
            [("peer", sent.label), ("messageID", envelope.messageID ?? ""), ("status", "received")])
        let delivery = EnvelopeDelivery(
            status: .received, message: "Quick Share \(isLoneLink ? "link" : "text") accepted (PIN \(sent.pin))",
            elapsed: elapsed, endpoint: sent.endpoint)
        return CarrierReceipt(peer: sent.label, messageID: envelope.messageID, delivery: delivery)
    }

    package func sendFiles(
        _ paths: [String], to peerID: String, progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> FilesDelivery {
        guard paths.count <= InboundLimits().files else {
            throw .refused("Quick Share takes at most \(InboundLimits().files) files at once")
        }
        var files: [OutgoingShare.File] = []
        for path in paths {
            do {
                let size = try DiskFile.reading(path).status().size
                let name = String(path.split(separator: "/").last ?? Substring(path))
                files.append(.init(name: name, size: size, mimeType: MediaType.of(fileName: name)))
            } catch {
                throw .refused("cannot send \(path): \(error)")
            }
        }
        let share = OutgoingShare(files: files)
        let bytes = share.fileBytes
        // The person's answer, then the bytes at 10 MB/s at the least (a week at most).
        let deadline = ContinuousClock.now + Self.answerWait + .seconds(min(Double(bytes) / 10_000_000 + 10, 604_800))
        let sent = try await send(share, files: paths, to: peerID, until: deadline, progress)
        let count = files.count
        return FilesDelivery(label: sent.label, files: count, bytes: bytes, certificate: nil) { size in
            "Quick Share took \(count) file\(count == 1 ? "" : "s") (\(size)), PIN \(sent.pin)"
        }
    }

    /// What one connection delivered to.
    struct Sent: Sendable {
        let label: String
        let endpoint: Endpoint
        let pin: String
    }

    /// Offers `share` to the receiver `peerID` on a connection of its own and sends what it accepts
    /// (the files read from `paths`, in order), all by `deadline`.
    /// - Throws: `SendError.refused` when the receiver declined; `.undelivered` when it is not listed
    ///   now, cannot be reached, or the connection ended before everything went.
    private func send(
        _ share: OutgoingShare, files paths: [String], to peerID: String, until deadline: ContinuousClock.Instant,
        _ progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> Sent {
        guard let receiver = receiver(named: peerID) else {
            throw .undelivered("\(peerID) is not receiving now (it is listed while its Quick Share is visible)")
        }
        let endpoint = Endpoint(receiver.address, port: receiver.port)
        let machine: OutboundConnection
        do {
            machine = OutboundConnection(
                share: share, keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        } catch {
            throw .undelivered("\(error)")
        }
        let channel: any ByteChannel
        do {
            channel = try await connect(endpoint, min(deadline - .now, .seconds(10)))
        } catch {
            throw .undelivered("cannot reach \(receiver.label) at \(endpoint): \(error)")
        }
        defer { channel.shutdown() }
        var session = OutboundSession(
            machine: machine, channel: channel, label: receiver.label, paths: paths, share: share, progress: progress,
            deadline: deadline)
        try await session.run(machine.opening(endpointID: endpointID, info: info))
        return Sent(label: receiver.label, endpoint: endpoint, pin: session.machine.pin ?? "")
    }

    /// Lists the receivers DNS-SD finds, but hexd's own instance and other hexds' (their claims). One
    /// newly listed is remembered for naming it later, and what waits for it in the outbox goes now.
    func found(_ instance: DNSSDFound) async {
        guard let id = QuickShareService.endpointID(ofInstance: instance.name) else { return }
        let endpointID = String(decoding: id, as: UTF8.self)
        guard id != self.endpointID, QuickShareID.of(endpointID: endpointID) != nil else { return }
        if instance.leaving {
            guard let receiver = receivers.receivers[endpointID] else { return }
            receivers.left(endpointID)
            logger.info("Quick Share receiver \(receiver.label) (\(endpointID)) left")
            await events.publish(
                .peerLost, peerUUID: QuickShareID.of(endpointID: endpointID), peer: receiver.label)
            return
        }
        guard let port = instance.port, let text = instance.keys["n"], let bytes = Base64URL.decode(text),
            let info = EndpointInfo(bytes), !isHexd(endpointID: endpointID, keys: instance.keys)
        else { return }
        let isNew = receivers.receivers[endpointID] == nil
        let listed = receivers.heard(
            endpointID, info: info, at: instance.address, port: port, interval: instance.interval, now: .now)
        if listed { receiverHeard.ring() }
        guard listed, isNew, let id = QuickShareID.of(endpointID: endpointID),
            let receiver = receivers.receivers[endpointID]
        else { return }
        logger.info("Quick Share receiver \(receiver.label) (\(id)) found at \(instance.address):\(port)")
        await events.publish(.peerFound, peerUUID: id, peer: receiver.label, versionID: "Quick Share")
        await intake.deviceFound(
            id: id, name: receiver.label, versionID: "Quick Share", address: instance.address.description)
    }

    /// Whether an instance's TXT carries another hexd's claim on it, which holds.
    private func isHexd(endpointID: String, keys: [String: String]) -> Bool {
        guard let peer = keys[Self.claimKeys.peer], let key = keys[Self.claimKeys.key],
            let signature = keys[Self.claimKeys.signature]
        else { return false }
        return claims.isHexd(
            QuickShareID.of(endpointID: endpointID),
            claim: PersonaClaim(peer: peer, key: key, signature: signature))
    }

    /// The TXT keys of hexd's claim on its instance, which the apps ignore.
    static let claimKeys = (peer: "hexd-peer", key: "hexd-key", signature: "hexd-sig")
}

/// One offer on its way: the connection, the machine, and the files read as the receiver takes them.
private struct OutboundSession {
    var machine: OutboundConnection
    let channel: any ByteChannel
    let label: String
    let paths: [String]
    let share: OutgoingShare
    let progress: @Sendable (String, Int64, Int64) async -> Void
    /// Keep-alives every 10 s, and the end after 30 s without a frame (or a chunk taken); the send's
    /// own deadline bounds the rest (the receiver's person has `answerWait`).
    var timers = ConnectionTimers.sending(opened: .now)
    let deadline: ContinuousClock.Instant
    var outcome: Result<Void, SendError>?
    var sendingFiles = false
    var decoder = FrameDecoder(maximumFrameBytes: InboundLimits().frameBytes)

    /// Writes `opening`, then reads and answers the receiver's frames until the machine is done or
    /// `deadline` passes.
    mutating func run(_ opening: [OutboundConnection.Action]) async throws(SendError) {
        await perform(opening)
        while outcome == nil {
            guard ContinuousClock.now < deadline else {
                throw .undelivered("\(label) did not take it in time (its person may not have answered)")
            }
            if sendingFiles {
                await sendFiles()
                continue
            }
            switch timers.due(at: .now) {
            case .giveUp(let why):
                throw .undelivered("\(label): \(why)")
            case .keepAlive where machine.isSecure:
                timers.keptAlive(at: .now)
                await perform(machine.keepAlive())
                continue
            default:
                break
            }
            await readFrames(timeout: min(deadline - .now, .seconds(1)))
        }
        if case .failure(let error) = outcome { throw error }
    }

    private mutating func readFrames(timeout: Duration) async {
        var bytes: [UInt8] = []
        do {
            let count = try await channel.read(maximumCount: 1 << 20, timeout: max(timeout, .milliseconds(1))) {
                bytes = Array($0)
            }
            guard count > 0 else { return await perform(machine.peerClosed()) }
            timers.heard(at: .now)
        } catch let error as SocketError where error.isTimeout {
            return
        } catch {
            return await perform(machine.peerClosed())
        }
        let frames: [[UInt8]]
        do {
            frames = try decoder.feed(bytes)
        } catch {
            outcome = .failure(.undelivered("\(label): \(error)"))
            return
        }
        for frame in frames where outcome == nil {
            let wasSecure = machine.isSecure
            let actions = machine.receive(frame)
            if !wasSecure, machine.isSecure { timers.keptAlive(at: .now) }
            await perform(actions)
        }
    }

    /// Sends every file, chunk by chunk, answering the receiver's keep-alives between chunks.
    private mutating func sendFiles() async {
        sendingFiles = false
        var sent: Int64 = 0
        let total = share.fileBytes
        for (index, path) in paths.enumerated() where outcome == nil {
            let file: DiskFile
            do {
                file = try DiskFile.reading(path)
                guard try file.status().size == share.files[index].size else {
                    outcome = .failure(.refused("\(path) changed size while it was offered"))
                    return
                }
            } catch {
                outcome = .failure(.refused("cannot send \(path): \(error)"))
                return
            }
            var offset: Int64 = 0
            let size = share.files[index].size
            repeat {
                let count = Int(min(Int64(OutboundConnection.chunkBytes), size - offset))
                let chunk: [UInt8]
                do {
                    chunk = try await BlockingPool.shared.run { [offset] in
                        var chunk = [UInt8](repeating: 0, count: count)
                        let read = try chunk.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
                        return Array(chunk.prefix(read))
                    }
                } catch {
                    outcome = .failure(.refused("cannot read \(path): \(error)"))
                    return
                }
                guard chunk.count == count else {
                    outcome = .failure(.refused("\(path) ended before its \(size) bytes"))
                    return
                }
                offset += Int64(count)
                await perform(machine.fileChunk(index: index, bytes: chunk, last: offset == size))
                // The receiver took the chunk: it is there, though it says nothing while bytes come.
                timers.heard(at: .now)
                sent += Int64(count)
                await progress(share.files[index].name, sent, total)
                guard ContinuousClock.now < deadline else {
                    outcome = .failure(.undelivered("\(label) took the files too slowly: \(sent) of \(total) bytes"))
                    return
                }
                // Frames the receiver sent meanwhile (keep-alives, a cancel) are read between chunks.
                await readFrames(timeout: .zero)
            } while offset < size && outcome == nil
        }
    }

    private mutating func perform(_ actions: [OutboundConnection.Action]) async {
        for action in actions where outcome == nil {
            switch action {
            case .send(let frame):
                do {
                    try await channel.write(FrameDecoder.framed(frame), timeout: QuickShareCarrier.writeTimeout)
                } catch {
                    outcome = .failure(.undelivered("\(label): \(error)"))
                }
            case .sendFiles:
                sendingFiles = true
            case .declined(let status):
                outcome = .failure(.refused("the person at \(label) declined it (\(status))"))
            case .delivered:
                outcome = .success(())
            case .close(let reason):
                outcome = .failure(.undelivered("\(label): \(reason)"))
            }
        }
    }
}
