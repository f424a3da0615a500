import FoundationEssentials
import Glibc
import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import KDEConnectCore

/// The links with KDE Connect devices: dialed or accepted within the tables' bounds and the
/// handshake gate's budget, proved by their TLS handshake, taken as `KDEConnectDevices` and
/// `KDEConnectLinks` say (a device paired here showing the certificate paired, at no lower version),
/// then served until they end: the device's packets read and answered, what others queue for it
/// written between them.
extension KDEConnectCarrier {
    /// Dials a device heard (hidden, only one paired here), and keeps the link if its handshake
    /// proves the device.
    nonisolated func dial(_ identity: KDEConnectIdentity, at address: IPAddress) async {
        do {
            guard let port = identity.tcpPort else { throw KDEConnectHandshake.Failure.identity("no TCP port") }
            if await !isVisible, let id = KDEConnectID.of(deviceID: identity.deviceID),
                try await !isPaired(peerID: id)
            {
                throw Refusal(description: "hexd is hidden (hexctl visibility), and the device is not paired")
            }
            let channel = try await connect(Endpoint(address, port: port), .seconds(5))
            let link = try await KDEConnectHandshake.dial(
                channel, own: own, heard: identity, tls: tls, now: Self.milliseconds(), within: deadlines.dial)
            guard link.identity.deviceID == identity.deviceID else {
                channel.shutdown()
                throw KDEConnectHandshake.Failure.mismatch("another device answered at \(address)")
            }
            await keep(link, from: address)
            channel.shutdown()
        } catch {
            await dialFailed(identity.deviceID.lowercased())
            logger.limited(
                "kdeconnect dial", .info,
                "cannot link with KDE Connect device \(identity.name) at \(address): \(error)")
        }
    }

    /// A dial ended without a link: the next one waiting may start.
    private func dialFailed(_ key: String) {
        links.dialFailed(key, at: .now)
        act(on: links.tick(at: .now))
    }

    /// Accepts links until cancelled: each connection within the tables' bounds and the
    /// handshake gate's budget.
    nonisolated func serve(on listener: StreamListener) async {
        await acceptConnections(on: listener, slots: linkSlots, logger: logger) { socket, slot in
            guard let address = socket.remoteAddress, self.gate.admit(socket, on: "KDE Connect") != nil else {
                socket.shutdown()
                return
            }
            try? socket.keepAlive(idle: 10, interval: 5, probes: 3)
            await self.accepted(socket, from: address, holding: slot)
        }
    }

    /// Serves a connection a device opened from `address` (past the handshake gate), until its
    /// link ends: a test hands it one held in memory.
    /// - Parameter slot: the listener's slot it holds, given back once the link is proved.
    nonisolated func accepted(_ channel: any ByteChannel, from address: IPAddress, holding slot: HeldSlot? = nil) async
    {
        guard connections.admit(channel, from: address.description) != .refused else {
            channel.shutdown()
            return
        }
        do {
            let link = try await KDEConnectHandshake.accept(
                channel, own: own, tls: tls, now: Self.milliseconds(), within: deadlines.accept, refusing: isHexd)
            // Proved, the link leaves the table of connections in their handshake (which closes the
            // stalest for a newcomer): links are bounded by `KDEConnectLinks`, and one is never
            // closed under its device (22.12 then loses it); nor by the listener's slots.
            connections.remove(channel)
            slot?.give()
            await keep(link, from: address)
        } catch {
            connections.remove(channel)
            logger.limited("kdeconnect accept", .info, "closed a KDE Connect connection from \(address): \(error)")
        }
        channel.shutdown()
        trimmer.burstFreed()
    }

    /// A link whose handshake proved its device: listed (in place of the device's older link,
    /// which the device closes itself), then served until it ends. A device paired here must show
    /// the certificate paired, and speak no lower version than it did.
    private nonisolated func keep(_ link: KDEConnectHandshake.Link, from address: IPAddress) async {
        let device = Device(
            identity: link.identity, address: address, version: link.version, certificate: link.certificate,
            publicKey: link.publicKey, linkedAt: .now, outgoing: KDEConnectOutgoing(), channel: link.connection.channel)
        let generation = await devices.trustGeneration
        let paired: Bool
        do {
            paired = try await isPaired(device)
        } catch {
            logger.limited(
                "kdeconnect trust", .warning, "refused a link from KDE Connect device \(device.label): \(error)")
            // A dial of hexd's own that reached it ends as a failure (not dialed again for a while).
            await dialFailed(device.key)
            return
        }
        if !paired, await !isVisible {
            logger.limited(
                "kdeconnect hidden", .info,
                "closed a link with KDE Connect device \(device.label): hexd is hidden, and it is not paired")
            await dialFailed(device.key)
            return
        }
        guard let number = await linkUp(device, paired: paired, readAt: generation) else { return }
        await serve(link, of: device)
        await linkEnded(device, number: number)
    }

    /// Why a device is not linked (or a pairing cannot be kept).
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether the device is paired here: its pin in the store is `paired` with this certificate.
    /// - Throws: `Refusal` when it is paired with another certificate (an impostor, or a device
    ///   reinstalled: `hexctl unpair` forgets the old one), or now speaks a lower version than when
    ///   last linked (a downgrade); a store error.
    private nonisolated func isPaired(_ device: Device) async throws -> Bool {
        guard let pin = try await intake.store.pin(forPeer: device.peerID), pin.trust == .paired else {
            return false
        }
        guard pin.fingerprint == device.certificate.description else {
            throw Refusal(
                description: "it is paired with another certificate (\(pin.fingerprint.prefix(16))…); if it was "
                    + "reinstalled, forget it with hexctl unpair \(device.peerID) and pair again")
        }
        let known = try await intake.store.knownVersion(of: device.peerID)
        if let known, let spoken = Self.version(known), device.version < spoken {
            throw Refusal(
                description: "it spoke protocol \(spoken) when last linked and now speaks \(device.version): "
                    + "a downgrade is refused")
        }
        return true
    }

    /// What the peers listing and the sightings call a version: `KDE Connect 8`.
    static func versionID(_ version: Int) -> String { "KDE Connect \(version)" }

    /// The protocol version a sighting recorded (`versionID`); nil for another text.
    static func version(_ versionID: String) -> Int? {
        let prefix = "KDE Connect "
        guard versionID.hasPrefix(prefix) else { return nil }
        return Int(versionID.dropFirst(prefix.count))
    }

    /// Lists a device whose link is up; nil when the link is not taken: past the cap of unpaired
    /// links, or refused by `KDEConnectDevices` (too many links of the device, another
    /// certificate than its link up's, or its pairing read before the store's pairings changed).
    private func linkUp(_ device: Device, paired: Bool, readAt generation: Int) async -> Int? {
        let id = device.key
        if let refusal = devices.check(id, certificate: device.certificate.description, readAt: generation) {
            // Ends a dial of hexd's own that reached it, as a failure: the device stays dialable.
            links.dialFailed(id, at: .now)
            switch refusal {
            case .impostor:
                logger.limited(
                    "kdeconnect impostor", .warning,
                    "refused a link from \(device.address) claiming KDE Connect device \(device.identity.name): its "
                        + "certificate is not the one of that device's link up")
            case .tooManyLinks:
                logger.limited(
                    "kdeconnect links", .info,
                    "closed a link with \(device.label): \(KDEConnectDevices<Device>.linksPerDevice) of its links "
                        + "are up")
            case .trustChanged:
                logger.limited(
                    "kdeconnect links", .info,
                    "closed a link with \(device.label): the pairings changed while it was checked (it links again)")
            }
            return nil
        }
        // A device back within its grace may bring its pairing with it (`KDEConnectDevices.add`).
        let taken = links.linkUp(id, paired: paired || devices[pairing: id]?.isPaired == true, at: .now)
        // A dial may have ended: the next one waiting may start.
        act(on: links.tick(at: .now))
        guard taken else {
            logger.limited(
                "kdeconnect cap", .info, "closed a link with \(device.identity.name): too many unpaired links")
            return nil
        }
        // A device back within the grace after its last link ended was never gone.
        let (number, arrived) = devices.add(
            device, of: id, certificate: device.certificate.description, version: device.version, paired: paired)
        if arrived {
            logger.info(
                "KDE Connect device \(device.label), \(device.identity.deviceType.rawValue), protocol \(device.version)"
                    + (paired ? ", paired" : ""))
            await intake.events.publish(
                .peerFound, peerUUID: device.peerID, peer: device.identity.name,
                versionID: Self.versionID(device.version))
        }
        if devices.isPaired(id) { await cameBack(device) }
        return number
    }

    /// A paired device is linked: remembered (its name for `--to`, its version for the downgrade
    /// guard), and its queued sends made due.
    func cameBack(_ device: Device) async {
        await intake.deviceFound(
            id: device.peerID, name: device.identity.name, versionID: Self.versionID(device.version),
            address: device.address.description)
    }

    /// A link ended: its device is gone once no link of it is back within
    /// `KDEConnectDevices.leaveGrace` (`keepTime`).
    private func linkEnded(_ device: Device, number: Int) {
        if devices.ended(device.key, number: number, at: .now) { links.linkDown(device.key) }
    }

    static let pace = LinePace(idle: .seconds(7 * 86_400), grace: .seconds(10), minimumBytesPerSecond: 64 * 1_024)

    /// How long writing one batch of packets may take.
    static let writeTimeout: Duration = .seconds(10)

    /// Serves the link until it ends: reads the device's packets and answers them, and writes what
    /// others queue for the device between them (the link's task alone uses its connection).
    private nonisolated func serve(_ link: KDEConnectHandshake.Link, of device: Device) async {
        let outgoing = device.outgoing
        defer { outgoing.close() }
        while !Task.isCancelled {
            let batches = outgoing.take()
            for (index, batch) in batches.enumerated() {
                let written = await Self.write(batch.lines, on: link)
                batch.done(written)
                guard written else {
                    // The link failed: the batches taken after this one are not written either.
                    for later in batches[(index + 1)...] { later.done(false) }
                    return
                }
            }
            switch await Self.next(from: link, or: outgoing.bell) {
            case .rung:
                continue
            case .ended:
                return
            case .line(let line):
                guard let packet = try? KDEConnectPacket.decode(line) else {
                    logger.limited("kdeconnect packet", .info, "an unreadable packet from \(device.label)")
                    continue
                }
                let replies = await answer(packet, from: device)
                guard await Self.write(replies.map { Array($0.encoded(id: Self.milliseconds()).dropLast()) }, on: link)
                else { return }
            }
        }
    }

    /// Writes packets (each without its line ending) on the link; false when it failed.
    private static func write(_ lines: [[UInt8]], on link: KDEConnectHandshake.Link) async -> Bool {
        guard !lines.isEmpty else { return true }
        return (try? await link.lines.writeLines(lines, timeout: writeTimeout)) != nil
    }

    /// What happened first on a link.
    private enum Next: Sendable {
        case line([UInt8])
        /// Packets were queued (or the link closed): the read waiting was stopped.
        case rung
        /// The link ended (closed, failed, too long a line, or past its pace).
        case ended
    }

    /// The link's task alone uses the connection: while the child reads, the parent only waits.
    private struct Reading: @unchecked Sendable {
        let link: KDEConnectHandshake.Link
    }

    /// The next line from the device, or a ring of `bell`, whichever comes first. A read stopped
    /// by a ring loses nothing: it stops only while it waits for the socket, and the bytes of a
    /// line begun stay in the link's framer. A line that came as the ring did is still returned.
    private static func next(from link: KDEConnectHandshake.Link, or bell: Doorbell) async -> Next {
        let reading = Reading(link: link)
        return await withTaskGroup(of: Next?.self) { group in
            group.addTask {
                // Idle for long (a device that vanished is seen by TCP keepalive), but a line begun
                // must keep coming.
                do {
                    guard case .line(let line)? = try await reading.link.lines.readLine(pace: pace) else {
                        return .ended
                    }
                    return .line(line)
                } catch is CancellationError {
                    return nil
                } catch {
                    return .ended
                }
            }
            group.addTask {
                await bell.wait()
                return Task.isCancelled ? nil : .rung
            }
            var outcome: Next?
            while let next = await group.next() {
                group.cancelAll()
                switch (outcome, next) {
                case (_, nil): break
                case (nil, let next?), (.rung?, let next?): outcome = next
                default: break
                }
            }
            return outcome ?? .rung
        }
    }

    /// What hexd answers a packet with: pairing moves as the person and the protocol say; a paired
    /// device's share is kept; anything else from a device not paired is refused.
    private func answer(_ packet: KDEConnectPacket, from device: Device) async -> [KDEConnectPair] {
        let id = device.key
        // A packet comes on a link, whose device has its pairing (`KDEConnectDevices`).
        guard var pairing = devices[pairing: id] else { return [] }
        if let pair = KDEConnectPair(packet) {
            let actions = pairing.received(pair, at: .now, wallClock: Self.seconds())
            devices[pairing: id] = pairing
            return await perform(actions, for: device)
        }
        let (taken, actions) = pairing.otherPacket(at: .now)
        devices[pairing: id] = pairing
        guard taken else {
            logger.limited(
                "kdeconnect unpaired", .info,
                "refused a \(packet.type.clipped(toUTF8: 64)) packet from \(device.label): it is not paired")
            return await perform(actions, for: device)
        }
        await receive(packet, from: device)
        return []
    }
}
