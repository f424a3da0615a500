import HexCarrier
import HexEngine
import HexKit
import HexTLS
import KDEConnectCore

/// Pairing with KDE Connect devices, the person deciding: a device's request is shown where
/// hexd's own are (`hexctl peers`, `watch`, a notification, the page) with the verification code
/// both sides show, and `hexctl pair --accept` (or `--decline`) answers it; `hexctl pair NAME`
/// asks the device; `hexctl unpair` ends it on both sides. A paired device's certificate is kept
/// in the store (its pin), checked on every later link.
extension KDEConnectCarrier {
    /// Acts on what the pairing decided for `device`; returns the packets to write to it.
    func perform(_ actions: [KDEConnectPairing.Action], for device: Device) async -> [KDEConnectPair] {
        var packets: [KDEConnectPair] = []
        for action in actions {
            switch action {
            case .send(let packet):
                packets.append(packet)
            case .askPerson(let timestamp):
                await askPerson(about: device, timestamp: timestamp)
            case .trust:
                // The device accepted hexd's request: paired as the machine holds it, undone on both
                // sides should the store not keep it.
                if await keepPin(of: device) {
                    await trusted(device)
                } else {
                    packets += trustNotKept(device)
                }
            case .distrust:
                await distrust(device)
            case .ended(let ending):
                logger.limited(
                    "kdeconnect pairing", .info,
                    "pairing with KDE Connect device \(device.label) ended: \(Self.describe(ending))")
            }
        }
        return packets
    }

    /// The verification code of a pairing with `device` dated `timestamp` (protocol 8); empty
    /// when OpenSSL cannot hash.
    func code(with device: Device, timestamp: Int64?) -> String {
        (try? KDEConnectVerification.code(ownKey: ownKey, peerKey: device.publicKey, timestamp: timestamp)) ?? ""
    }

    private func askPerson(about device: Device, timestamp: Int64?) async {
        let code = code(with: device, timestamp: timestamp)
        logger.limited(
            "kdeconnect request", .info,
            "KDE Connect device \(device.label) asks to pair: code \(code); accept with: hexctl pair --accept "
                + device.peerID)
        await intake.events.publish(
            .pairRequested, peerUUID: device.peerID, peer: device.identity.name,
            versionID: Self.versionID(device.version), message: code)
        intake.pairRequested(name: device.identity.name, key: device.peerID, code: code)
    }

    /// Keeps the device's certificate as paired in the store; false when the store cannot.
    private func keepPin(of device: Device) async -> Bool {
        do {
            _ = try await intake.store.pair(peer: device.peerID, fingerprint: device.certificate.description)
            return true
        } catch {
            logger.error("cannot keep the pairing with KDE Connect device \(device.label): \(error)")
            return false
        }
    }

    /// Forgets a certificate kept by `keepPin` for a pairing that ended meanwhile.
    private func dropPin(of device: Device) async {
        do {
            _ = try await intake.store.resetTrust(peer: device.peerID, label: device.identity.name)
        } catch {
            logger.error("cannot forget the pairing with KDE Connect device \(device.label): \(error)")
        }
    }

    /// The device's certificate kept as paired: its link counts as a paired one's, and it is said.
    private func trusted(_ device: Device) async {
        devices.trustChanged()
        // Paired, its link no longer counts against the cap on unpaired ones.
        links.setPaired(device.key, true)
        logger.info("paired with KDE Connect device \(device.label): certificate \(device.certificate)")
        await intake.events.publish(
            .paired, peerUUID: device.peerID, peer: device.identity.name, versionID: Self.versionID(device.version),
            message: device.certificate.description)
        await cameBack(device)
    }

    /// The pairing the store could not keep is undone: the packets that tell the device.
    private func trustNotKept(_ device: Device) -> [KDEConnectPair] {
        guard var pairing = devices[pairing: device.key] else { return [] }
        let actions = pairing.trustNotKept()
        devices[pairing: device.key] = pairing
        return Self.packets(of: actions)
    }

    /// The packets among `actions`, to write to the device.
    private static func packets(of actions: [KDEConnectPairing.Action]) -> [KDEConnectPair] {
        actions.compactMap { if case .send(let packet) = $0 { packet } else { nil } }
    }

    /// Forgets the device's certificate: the device unpaired, or asked to pair again.
    private func distrust(_ device: Device) async {
        devices.trustChanged()
        links.setPaired(device.key, false)
        dropQueuedFiles(device.key)
        do {
            _ = try await intake.store.resetTrust(peer: device.peerID, label: device.identity.name)
            logger.info("KDE Connect device \(device.label) is no longer paired")
        } catch LookupError.noPin {
            return
        } catch {
            logger.error("cannot forget the pairing with KDE Connect device \(device.label): \(error)")
        }
    }

    private static func describe(_ ending: KDEConnectPairing.Ending) -> String {
        switch ending {
        case .declinedByDevice: "the device declined"
        case .cancelledByDevice: "the device cancelled its request"
        case .expired: "no answer within \(Int(KDEConnectPairing.requestLifetime.inSeconds)) s"
        case .clocksApart: "its clock is more than \(KDEConnectPairing.maximumClockSkew) s from this one's"
        case .declinedByPerson: "declined here"
        }
    }

    /// Writes pairing packets on the device's link; false when they could not be.
    func write(_ packets: [KDEConnectPair], to device: Device) async -> Bool {
        guard !packets.isEmpty else { return true }
        let lines = packets.map { Array($0.encoded(id: Self.milliseconds()).dropLast()) }
        return await device.outgoing.write(lines, timeout: Self.queueWait)
    }

    // MARK: What the person asks

    /// The device linked now that `text` names (`DeviceNaming`): its ID (`kdeconnect:…`), its name, or a
    /// prefix of its ID or device ID.
    func device(matching text: String) -> Device? {
        DeviceNaming.device(
            named: text, among: linkedDevices, forms: Self.idForms, id: \.peerID, name: \.identity.name)
    }

    /// The device `peerID` (`kdeconnect:…`) when it has a link up.
    func device(peerID: String) -> Device? {
        linkedDevices.first { $0.peerID == peerID }
    }

    /// A pairing under way with the device, as `hexctl peers` shows it: the code both sides show,
    /// and whether hexd's person is to answer; nil when there is none.
    func pendingPairing(of device: Device) -> (code: String, awaitingUs: Bool)? {
        switch devices[pairing: device.key]?.state {
        case .requestedByPeer(_, let timestamp)?:
            (code(with: device, timestamp: timestamp), true)
        case .requestedByUs(_, let timestamp)?:
            (code(with: device, timestamp: device.version >= 8 ? timestamp : nil), false)
        default: nil
        }
    }

    /// Whether the device is paired (its link up, or its pin in the store when it is away).
    /// - Throws: a store error.
    func isPaired(peerID: String) async throws -> Bool {
        if let device = device(peerID: peerID) { return devices.isPaired(device.key) }
        return try await intake.store.pin(forPeer: peerID)?.trust == .paired
    }

    /// The person asks to pair with `device` (`hexctl pair NAME`), or accepts its request
    /// (`--accept`, or asking while it asks). hexd holds the device paired only once the answer
    /// is written and the store has kept its certificate (else the device is told it is not).
    /// - Throws: `TrustRefusal` when it is paired already, asks nothing to accept, the packet could
    ///   not be written, or the pairing could not be kept.
    private func pair(_ device: Device, accepting: Bool) async throws(TrustRefusal) -> TrustOutcome {
        let key = device.key
        guard let before = devices[pairing: key] else { throw Self.refusal(.noRequest) }
        var pairing = before
        let actions: [KDEConnectPairing.Action]
        do {
            actions = accepting ? try pairing.accept() : try pairing.request(at: .now, wallClock: Self.seconds())
        } catch {
            throw Self.refusal(error)
        }
        // A request is under way as it goes out; an acceptance counts once it is written and kept.
        let pairsNow = pairing.isPaired
        if !pairsNow { devices[pairing: key] = pairing }
        let packets = Self.packets(of: actions)
        guard await write(packets, to: device) else {
            if devices[pairing: key] == pairing { devices[pairing: key] = before }
            throw TrustRefusal(description: "the link with \(device.label) ended before the answer was written")
        }
        if pairsNow {
            let kept = await keepPin(of: device)
            guard devices[pairing: key] == before else {
                // Accepted meanwhile by another answer: paired all the same.
                if devices[pairing: key]?.isPaired == true { return Self.outcome(of: device, paired: true) }
                // It cancelled or asked again: it is told it is not paired, as hexd holds.
                if kept { await dropPin(of: device) }
                _ = await write([KDEConnectPair(pair: false)], to: device)
                throw TrustRefusal(description: "\(device.label)'s request changed while the answer was written")
            }
            devices[pairing: key] = pairing
            guard kept else {
                _ = await write(trustNotKept(device), to: device)
                throw TrustRefusal(description: "the pairing with \(device.label) could not be kept (the log says why)")
            }
            await trusted(device)
        }
        if case .requestedByUs(_, let timestamp) = pairing.state {
            logger.info("asked KDE Connect device \(device.label) to pair")
            return TrustOutcome(
                peerID: device.peerID, name: device.identity.name, key: device.certificate.description, trust: nil,
                code: code(with: device, timestamp: device.version >= 8 ? timestamp : nil), awaitingDevice: true)
        }
        return Self.outcome(of: device, paired: pairing.isPaired)
    }

    private static func outcome(of device: Device, paired: Bool) -> TrustOutcome {
        TrustOutcome(
            peerID: device.peerID, name: device.identity.name, key: device.certificate.description,
            trust: paired ? .paired : nil)
    }

    /// The person declines the device's request (`hexctl pair --decline`).
    /// - Throws: `TrustRefusal` when it asks nothing.
    private func decline(_ device: Device) async throws(TrustRefusal) -> TrustOutcome {
        guard var pairing = devices[pairing: device.key] else { throw Self.refusal(.noRequest) }
        let actions: [KDEConnectPairing.Action]
        do {
            actions = try pairing.decline(at: .now)
        } catch {
            throw Self.refusal(error)
        }
        devices[pairing: device.key] = pairing
        _ = await write(await perform(actions, for: device), to: device)
        return TrustOutcome(peerID: device.peerID, name: device.identity.name, key: nil, trust: nil)
    }

    /// What the person reads when what they asked cannot be done now.
    private static func refusal(_ refusal: KDEConnectPairing.Refusal) -> TrustRefusal {
        switch refusal {
        case .noRequest:
            TrustRefusal(
                description: "that KDE Connect device asks nothing now (a request ends after "
                    + "\(Int(KDEConnectPairing.requestLifetime.inSeconds)) s)")
        case .alreadyPaired:
            TrustRefusal(description: "that KDE Connect device is paired already (hexctl unpair ends it)")
        case .notPaired: TrustRefusal(description: "that KDE Connect device is not paired")
        }
    }

    /// The person unpairs the device `peerID` (`hexctl unpair`): its certificate forgotten first,
    /// then, when it is linked, the device told so (a device that reads nothing cannot hold this).
    /// - Throws: `LookupError.noPin` when it is neither paired nor asked; a store error.
    package func unpair(_ peerID: String, label: String) async throws -> TrustOutcome? {
        devices.trustChanged()
        var forgotten: PeerPin?
        do {
            forgotten = try await intake.store.resetTrust(peer: peerID, label: label)
        } catch LookupError.noPin {
            forgotten = nil
        }
        var name = label
        var ended = false
        if let device = device(peerID: peerID), var pairing = devices[pairing: device.key],
            let actions = try? pairing.unpair(at: .now)
        {
            (name, ended) = (device.identity.name, true)
            devices[pairing: device.key] = pairing
            links.setPaired(device.key, false)
            dropQueuedFiles(device.key)
            let packets = Self.packets(of: actions)
            _ = await write(packets, to: device)
        }
        guard forgotten != nil || ended else { throw LookupError.noPin(label) }
        logger.info(
            "unpaired KDE Connect device \(name) (\(peerID))"
                + (forgotten.map { ": forgot its certificate \($0.fingerprint)" } ?? ""))
        return TrustOutcome(peerID: peerID, name: name, key: forgotten?.fingerprint, trust: nil)
    }
}

extension KDEConnectCarrier: TrustingCarrier {
    /// A device linked now: hexd asks it to pair, accepts or declines what it asks.
    package func trustSubject(named text: String, for step: TrustStep) -> String? {
        device(matching: text)?.peerID
    }

    package func trust(_ step: TrustStep, _ peerID: String) async throws -> TrustOutcome {
        guard let device = device(peerID: peerID) else {
            throw TrustRefusal(description: "\(peerID) has no KDE Connect link up any more")
        }
        return switch step {
        case .request: try await pair(device, accepting: false)
        case .accept: try await pair(device, accepting: true)
        case .decline: try await decline(device)
        }
    }
}
