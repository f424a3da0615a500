import HexCarrier
import HexKit
import KDEConnectCore

/// What paired KDE Connect devices share with hexd: a URL becomes a hex with that link, a text a
/// hex with the text as its description and every web address in it as a link, kept by the rules
/// every peer's hexes are (the accept policy, blocks, budgets), so the inbox, notifications, the
/// page, `--on-receive` and `watch` take them like any hex. A file lands in the downloads folder
/// (`+Files`). A ping ("Send ping" in the apps) is kept as an Alert from the device, its message or
/// the apps' `Ping!`.
extension KDEConnectCarrier {
    /// A packet from a paired device (pairing aside).
    func receive(_ packet: KDEConnectPacket, from device: Device) async {
        if let ping = KDEConnectPing(packet) {
            await keep(Envelope.alert(ping.text, versionID: Self.versionID(device.version)), from: device)
            return
        }
        guard packet.type == KDEConnectShare.packetType else {
            logger.limited(
                "kdeconnect other", .debug, "a \(packet.type.clipped(toUTF8: 64)) packet from \(device.label), not used"
            )
            return
        }
        let share: KDEConnectShare
        do {
            share = try KDEConnectShare(packet)
        } catch {
            logger.limited("kdeconnect share", .info, "a share from \(device.label) is not taken: \(error)")
            return
        }
        if case .file(let file) = share {
            queue(file, from: device)
        } else if let hex = share.hex(from: device.identity.name, senderID: device.peerID) {
            await keep(hex, from: device)
        }
    }

    /// Keeps `hex` from `device` (its files' bytes counted with it); false when it was not kept.
    @discardableResult
    func keep(_ hex: HexJM, from device: Device, attachedBytes: Int = 0) async -> Bool {
        await keep(
            Envelope.store(hex, versionID: Self.versionID(device.version)), from: device, attachedBytes: attachedBytes)
    }

    /// Acts on `envelope` from `device` as on any peer's, with a message ID of its own; false when
    /// what it holds was not kept.
    @discardableResult
    private func keep(_ envelope: Envelope, from device: Device, attachedBytes: Int = 0) async -> Bool {
        var envelope = envelope
        envelope.messageID = UUID().uuidString
        let outcome = await intake.take(
            [envelope], proof: device.proof, from: device.label, address: device.address.description,
            attachedBytes: attachedBytes
        ).first
        switch outcome {
        case .success(.stored), .success(.duplicate), .success(.alert): return true
        default: return false
        }
    }
}
