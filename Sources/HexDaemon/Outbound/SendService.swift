import HexCarrier
import HexCommandLine
import HexEngine
import HexKit
import HexNet

/// Sends to every kind of peer through its carrier: finds what a text names among the carriers'
/// devices, asks the carrier whose device it is to plan and deliver, and switches on none. hexd's
/// own protocol is the first carrier asked; the outbox decides when, and what an outcome means.
struct SendService: Sendable {
    /// hexd's own protocol, asked first.
    let envelopes: EnvelopeCarrier
    /// hexd as a LocalSend, KDE Connect and Quick Share device, as each becomes ready.
    let carriers: ForeignCarriers
    /// The store, for the peers seen before.
    let service: HexService

    /// The peers in the table, which the outbox watches for arrivals.
    var directory: PeerDirectory { envelopes.directory }

    /// Every carrier, hexd's own first.
    var entries: [CarrierEntry] { [CarrierEntry(envelopes)] + carriers.entries }

    /// The target `text` names: `HOST:PORT`; a peer or device listed now by name, ID or unique ID
    /// prefix; else a peer seen before (by name or ID prefix, as remembered), or the full ID of a
    /// device a send may wait for (`SendingCarrier.target(unlisted:)`): it may be away for now.
    /// - Throws: `LookupError` when `text` names no peer, or a store error.
    func target(_ text: String) async throws -> CarrierTarget {
        if let written = Endpoint.bracketed(text, defaultPort: DefaultPorts.envelopes) {
            throw LookupError.unbracketed(text, write: written)
        }
        if let address = Endpoint(parsing: text) {
            for entry in entries where entry.kind.takesAddresses {
                if let target = await entry.carrier?.target(at: address) { return target }
            }
            throw LookupError.noPeer(text)
        }
        if let listed = try await listed(text) { return listed }
        if let seen = try await service.knownPeer(matching: text) {
            // The store keeps IDs in upper case; a device's of another kind has its own spelling.
            return CarrierTarget(peerID: seen.uuid.canonicalPeerID ?? seen.uuid, label: seen.name)
        }
        guard let id = text.canonicalPeerID, let entry = entry(owning: id), entry.takesIDs else {
            throw LookupError.noPeer(text)
        }
        // Not up yet, its carrier cannot say: the send waits for it.
        guard let carrier = entry.carrier else { return CarrierTarget(peerID: id, label: id) }
        guard let target = try await carrier.target(unlisted: id) else { throw LookupError.noPeer(text) }
        return target
    }

    /// The peer or device a carrier lists that `text` names (its name, its ID or a unique prefix
    /// of it); nil when none does.
    /// - Throws: `LookupError` when `text` is ambiguous: it matches several peers, or devices of
    ///   two kinds go by that name.
    func listed(_ text: String) async throws(LookupError) -> CarrierTarget? {
        var found: [(target: CarrierTarget, namesake: Namesake)] = []
        for carrier in entries.compactMap(\.carrier) {
            if let device = try await carrier.target(named: text), let id = device.peerID {
                found.append((device, type(of: carrier).namesake(id)))
            }
        }
        guard found.count <= 1 else { throw .twoKinds(text, found[0].namesake, found[1].namesake) }
        return found.first?.target
    }

    /// How long one attempt at a send to `peerID` may take when its caller would wait `asked`: as
    /// its carrier says (a LocalSend device's person may take minutes to answer). A destination no
    /// carrier owns (an outbox lane's address, `HOST:PORT`) is waited for as asked.
    func attemptTimeout(toPeer peerID: String?, asked: Duration) -> Duration {
        peerID.flatMap(entry(owning:))?.kind.attemptTimeout(asked: asked) ?? asked
    }

    /// The carrier of the device `target` names: its ID's, or for an address alone the first that
    /// takes addresses; nil when none is.
    func entry(for target: CarrierTarget) -> CarrierEntry? {
        if let id = target.peerID { return entry(owning: id) }
        return target.address == nil ? nil : entries.first { $0.kind.takesAddresses }
    }

    private func entry(owning peerID: String) -> CarrierEntry? {
        entries.first { $0.kind.owns(peerID) }
    }

    /// The kind of the peer or device `peerID`; nil for an ID no carrier owns.
    func kind(of peerID: String) -> PeerKind? { entry(owning: peerID)?.kind.kind }

    /// The first peer or device listed now that `text` names among the carriers of other kinds
    /// than `kind` (see `listed`), in the person's words; nil when none does.
    /// - Throws: `LookupError` when `text` names several of one such carrier's.
    func namesake(named text: String, besides kind: PeerKind) async throws(LookupError) -> Namesake? {
        for carrier in entries.compactMap(\.carrier) where type(of: carrier).kind != kind {
            if let device = try await carrier.target(named: text), let id = device.peerID {
                return type(of: carrier).namesake(id)
            }
        }
        return nil
    }

    /// The carrier of `target`, up.
    /// - Throws: `SendError` when none is, or it is not up now.
    private func carrier(for target: CarrierTarget) throws(SendError) -> any SendingCarrier {
        guard let entry = entry(for: target) else { throw .refused("\(target.label) is no peer hexd can reach") }
        return try entry.up()
    }

    /// What the first attempt at a send about to be queued may take from a look now (its route);
    /// nil when the device is away for now. A send that could never be made is refused now.
    /// - Throws: `SendError.refused`, or `.undelivered` while its carrier is starting.
    func plan(_ target: CarrierTarget, forceLegacy: Bool) async throws(SendError) -> SendPlan? {
        try await carrier(for: target).plan(target, legacy: forceLegacy)
    }

    /// Delivers a send once, through the carrier of its target.
    /// - Throws: `SendError`: `.undelivered` (the device is away, did not answer, or could not
    ///   store it: worth trying again) or `.refused` (it never will take it).
    func deliver(_ send: CarrierSend) async throws(SendError) -> CarrierReceipt {
        try await carrier(for: send.target).deliver(send)
    }
}
