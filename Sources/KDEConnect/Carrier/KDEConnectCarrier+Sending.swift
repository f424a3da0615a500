import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import KDEConnectCore

/// Hexes to paired KDE Connect devices: each as the shares `KDEConnectShare.shares(of:)` makes
/// (a lone link as a `url`, which the device opens; anything else as a `text`), written on the
/// device's link, with a ping that shows a text as a notification on a phone or tablet
/// (`KDEConnectPing.notifying(_:on:)`). KDE Connect confirms nothing: a share written in the
/// device's TLS connection is delivered as far as hexd can know.
extension KDEConnectCarrier {
    /// A share written to a device.
    struct Delivery: Sendable {
        let label: String
        let address: IPAddress
        let certificate: Fingerprint
        /// The shares written.
        let shares: Int
        /// Whether a ping went with them, to show their text as a notification.
        let pinged: Bool
    }

    /// Refuses a send to `peerID` when the device is not paired here: it would refuse the shares.
    /// - Throws: `SendError.refused`; `.undelivered` when the store cannot say (tried again later).
    package func refuseUnlessAllowed(_ peerID: String) async throws(SendError) {
        let paired: Bool
        do {
            paired = try await isPaired(peerID: peerID)
        } catch {
            throw .undelivered("cannot read whether \(peerID) is paired: \(error)")
        }
        guard paired else {
            throw .refused(
                "\(peerID) is a KDE Connect device not paired with hexd, which takes nothing from it: pair first "
                    + "(hexctl pair NAME, or pair from the device)")
        }
    }

    /// Writes `shares` to the paired device `peerID`, on its link, within `timeout`.
    /// - Throws: `SendError.refused` when there is nothing to share or the device is not paired;
    ///   `.undelivered` when it has no link up (away), its link ended first, or its link's reader
    ///   did not take the shares in time.
    func send(_ shares: [KDEConnectShare], to peerID: String, timeout: Duration) async throws(SendError) -> Delivery {
        guard !shares.isEmpty else {
            throw .refused("a hex with neither a description nor a link shows nothing on a KDE Connect device")
        }
        try await refuseUnlessAllowed(peerID)
        guard let device = device(peerID: peerID) else {
            if let key = peerID.kdeConnectDeviceID { awaitDevice(key) }
            throw .undelivered("\(peerID) is away: no KDE Connect link with it")
        }
        links.wait(for: device.key, false)
        let id = Self.milliseconds()
        let ping = KDEConnectPing.notifying(shares, on: device.identity)
        let packets = shares.map { $0.encoded(id: id) } + (ping.map { [$0.encoded(id: id)] } ?? [])
        guard await device.outgoing.write(packets.map { Array($0.dropLast()) }, timeout: timeout) else {
            throw .undelivered("\(device.label): its link ended, or was busy, before the share was written")
        }
        return Delivery(
            label: device.label, address: device.address, certificate: device.certificate, shares: shares.count,
            pinged: ping != nil)
    }

    /// A paired device that sends wait for is away: hexd broadcasts now, and every
    /// `KDEConnectLinks.waitingInterval` while it stays away (a device dials hexd when it hears
    /// it), until a send reaches it.
    private func awaitDevice(_ key: String) {
        links.wait(for: key, true)
        act(on: links.refresh(at: .now))
    }
}

extension KDEConnectCarrier: SendingCarrier {
    package static let idForms = [KDEConnectID.form]

    package static func attemptTimeout(asked: Duration) -> Duration { asked }

    package func target(named text: String) -> CarrierTarget? {
        device(matching: text).map { CarrierTarget(peerID: $0.peerID, label: $0.identity.name) }
    }

    /// Delivers a hex or an alert to the paired device `peerID` as the shares
    /// `KDEConnectShare.shares(of:eachLink:)` makes (`--kdeconnect-each-link`; an alert as a text),
    /// written on its link, a text also as a ping to a phone (see `send`): KDE Connect confirms
    /// nothing more.
    package func deliver(_ envelope: Envelope, to peerID: String, timeout: Duration) async throws(SendError)
        -> CarrierReceipt
    {
        let shares =
            envelope.hex.map { KDEConnectShare.shares(of: $0, eachLink: sendsEachLink) }
            ?? envelope.message.map { [.text($0)] } ?? []
        let start = ContinuousClock.now
        let sent = try await send(shares, to: peerID, timeout: timeout)
        let elapsed = ContinuousClock.now - start
        let what = (sent.shares == 1 ? "1 share" : "\(sent.shares) shares") + (sent.pinged ? " and a ping" : "")
        let milliseconds = Int(clamping: elapsed.inSeconds * 1_000)
        logger.info(
            "\(what) to \(sent.label): written to its KDE Connect link in \(milliseconds) ms",
            [("peer", sent.label), ("messageID", envelope.messageID ?? ""), ("status", "received")])
        let delivery = EnvelopeDelivery(
            status: .received, message: "KDE Connect: \(what) written to the device's link (it confirms nothing more)",
            elapsed: elapsed, peerKey: sent.certificate, endpoint: Endpoint(sent.address, port: 0))
        return CarrierReceipt(peer: sent.label, messageID: envelope.messageID, delivery: delivery)
    }
}
