import HexControl
import HexEngine
import HexKit
import HexTLS

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
                await trust(device)
            case .distrust:
                await distrust(device)
            case .ended(let ending):
                logger.info("pairing with KDE Connect device \(device.label) ended: \(Self.describe(ending))")
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
        logger.info(
            "KDE Connect device \(device.label) asks to pair: code \(code); accept with: hexctl pair --accept "
                + device.peerID)
        await intake.events.publish(
            .pairRequested, peerUUID: device.peerID, peer: device.identity.name,
            versionID: Self.versionID(device.version), message: code)
        intake.arrivals.publish([.pairRequest(name: device.identity.name, peerUUID: device.peerID, code: code)])
        expireLater(device.identity.deviceID)
    }

    /// Keeps the device's certificate as paired, and says so.
    private func trust(_ device: Device) async {
        // Paired, its link no longer counts against the cap on unpaired ones.
        links.setPaired(device.identity.deviceID, true)
        do {
            _ = try await intake.service.pair(peer: device.peerID, fingerprint: device.certificate.description)
        } catch {
            logger.error("cannot keep the pairing with KDE Connect device \(device.label): \(error)")
            return
        }
        logger.info("paired with KDE Connect device \(device.label): certificate \(device.certificate)")
        await intake.events.publish(
            .paired, peerUUID: device.peerID, peer: device.identity.name, versionID: Self.versionID(device.version),
            message: device.certificate.description)
        await cameBack(device)
    }

    /// Forgets the device's certificate: the device unpaired, or asked to pair again.
    private func distrust(_ device: Device) async {
        links.setPaired(device.identity.deviceID, false)
        do {
            _ = try await intake.service.resetTrust(peer: device.peerID, label: device.identity.name)
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

    /// Ends the device's request once its lifetime is over, unless it ended before.
    private func expireLater(_ deviceID: String) {
        Task {
            try? await Task.sleep(for: KDEConnectPairing.requestLifetime + .milliseconds(100))
            await self.expire(deviceID)
        }
    }

    private func expire(_ deviceID: String) async {
        guard var pairing = pairings[deviceID], let device = linked(deviceID) else { return }
        let actions = pairing.tick(at: .now)
        pairings[deviceID] = pairing
        let packets = await perform(actions, for: device)
        _ = await write(packets, to: device)
    }

    /// Writes pairing packets on the device's link; false when they could not be.
    func write(_ packets: [KDEConnectPair], to device: Device) async -> Bool {
        guard !packets.isEmpty else { return true }
        return await device.outgoing.write(packets.map { Array($0.encoded(id: Self.milliseconds()).dropLast()) })
    }

    /// The link lost was the device's last: a request in progress ends with it (the apps' too).
    func pairingsLinkLost(_ deviceID: String) {
        pairings[deviceID] = nil
    }

    // MARK: What the person asks

    /// The device linked now that `text` names: its hexd ID (`kdeconnect:…`), a prefix of its
    /// device ID of 4 characters or more, or its name (any case), when one device alone matches.
    func device(matching text: String) -> Device? {
        let wanted = text.trimmed
        guard !wanted.isEmpty else { return nil }
        let devices = linkedDevices
        if let id = wanted.canonicalPeerID, id.isKDEConnectID { return devices.first { $0.peerID == id } }
        let lowered = wanted.lowercased()
        let byName = devices.filter { $0.identity.name.lowercased() == lowered }
        if byName.count == 1 { return byName.first }
        guard byName.isEmpty, lowered.count >= 4 else { return nil }
        let byID = devices.filter { $0.identity.deviceID.lowercased().hasPrefix(lowered) }
        return byID.count == 1 ? byID.first : nil
    }

    /// A pairing under way with the device, as `hexctl peers` shows it; nil when there is none.
    func pendingPairing(of device: Device) -> PairingStatus? {
        switch pairings[device.identity.deviceID]?.state {
        case .requestedByPeer(_, let timestamp)?:
            PairingStatus(code: code(with: device, timestamp: timestamp), awaitingUs: true)
        case .requestedByUs(_, let timestamp)?:
            PairingStatus(code: code(with: device, timestamp: device.version >= 8 ? timestamp : nil), awaitingUs: false)
        default: nil
        }
    }

    /// Whether the device is paired (its link up, or its pin in the store when it is away).
    func isPaired(peerID: String) async -> Bool {
        if let device = linkedDevices.first(where: { $0.peerID == peerID }) {
            return pairings[device.identity.deviceID]?.isPaired == true
        }
        return (try? await intake.service.pin(forPeer: peerID))?.trust == .paired
    }

    /// The person asks to pair with `device` (`hexctl pair NAME`), or accepts its request
    /// (`--accept`, or asking while it asks).
    /// - Throws: `Refusal` when it is paired already, asks nothing to accept, or the packet could
    ///   not be written.
    func pair(_ device: Device, accepting: Bool) async throws(Refusal) -> TrustReport {
        let id = device.identity.deviceID
        guard var pairing = pairings[id] else { throw Self.refusal(.noRequest) }
        let actions: [KDEConnectPairing.Action]
        do {
            actions = accepting ? try pairing.accept() : try pairing.request(at: .now, wallClock: Self.seconds())
        } catch {
            throw Self.refusal(error)
        }
        pairings[id] = pairing
        let packets = await perform(actions, for: device)
        guard await write(packets, to: device) else {
            throw Refusal(description: "the link with \(device.label) ended before the answer was written")
        }
        if case .requestedByUs(_, let timestamp) = pairing.state {
            logger.info("asked KDE Connect device \(device.label) to pair")
            expireLater(id)
            return TrustReport(
                peerUUID: device.peerID, peer: device.identity.name, key: device.certificate.description, trust: nil,
                code: code(with: device, timestamp: device.version >= 8 ? timestamp : nil), awaitingPeer: true)
        }
        return TrustReport(
            peerUUID: device.peerID, peer: device.identity.name, key: device.certificate.description,
            trust: pairing.isPaired ? .paired : nil)
    }

    /// The person declines the device's request (`hexctl pair --decline`).
    /// - Throws: `Refusal` when it asks nothing.
    func decline(_ device: Device) async throws(Refusal) -> TrustReport {
        let id = device.identity.deviceID
        guard var pairing = pairings[id] else { throw Self.refusal(.noRequest) }
        let actions: [KDEConnectPairing.Action]
        do {
            actions = try pairing.decline(at: .now)
        } catch {
            throw Self.refusal(error)
        }
        pairings[id] = pairing
        _ = await write(await perform(actions, for: device), to: device)
        return TrustReport(peerUUID: device.peerID, peer: device.identity.name, key: nil, trust: nil)
    }

    /// What the person reads when what they asked cannot be done now.
    private static func refusal(_ refusal: KDEConnectPairing.Refusal) -> Refusal {
        switch refusal {
        case .noRequest:
            Refusal(
                description: "that KDE Connect device asks nothing now (a request ends after "
                    + "\(Int(KDEConnectPairing.requestLifetime.inSeconds)) s)")
        case .alreadyPaired: Refusal(description: "that KDE Connect device is paired already (hexctl unpair ends it)")
        case .notPaired: Refusal(description: "that KDE Connect device is not paired")
        }
    }

    /// The person unpairs the device `peerID` (`hexctl unpair`): told so when it is linked, and
    /// its certificate forgotten either way.
    /// - Throws: `LookupError.noPin` when it is neither paired nor asked.
    func unpair(peerID: String, label: String) async throws -> TrustReport {
        var name = label
        var ended = false
        if let device = linkedDevices.first(where: { $0.peerID == peerID }),
            var pairing = pairings[device.identity.deviceID], let actions = try? pairing.unpair(at: .now)
        {
            (name, ended) = (device.identity.name, true)
            pairings[device.identity.deviceID] = pairing
            _ = await write(await perform(actions, for: device), to: device)
        }
        do {
            let pin = try await intake.service.resetTrust(peer: peerID, label: label)
            logger.info("unpaired KDE Connect device \(name) (\(peerID)): forgot its certificate \(pin.fingerprint)")
            return TrustReport(peerUUID: peerID, peer: name, key: pin.fingerprint, trust: nil)
        } catch LookupError.noPin where ended {
            // Forgotten already, by the pairing's own actions above.
            return TrustReport(peerUUID: peerID, peer: name, key: nil, trust: nil)
        }
    }
}
