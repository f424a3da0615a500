import HexKit
import HexNet

/// What one discovery source saw of one peer, at one address: the only thing the peer directory
/// learns peers from. IPv4 and IPv6 beacons (a `--peer`'s answers among them) make one each; a
/// DNS-SD source makes the same value, so the directory never knows how a peer was found.
///
/// A sighting is a claim. What the directory does with it depends on `isSigned`, and a send still
/// dials with the key to prove (Protocol.md, section 9).
struct Sighting: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// The peer is there (and, for a query, asks to be answered).
        case present
        /// The peer said it is leaving.
        case leaving
    }

    var kind: Kind
    /// The peer's UUID, upper case.
    var uuid: String
    var name: String
    var versionID: String
    /// Its start: a new one means it restarted.
    var instance: String
    /// Where it was seen: the datagram's source, with its zone for a link-local IPv6 address.
    var address: IPAddress
    /// The TCP port it takes envelopes on.
    var port: UInt16
    /// How long until it should be seen again; three of these unseen and it expires.
    var interval: Duration
    var capabilities: [String]
    /// The certificate fingerprint it announced.
    var fingerprint: String?
    /// Signed by the key its UUID derives from, and newer than anything seen from that key: the
    /// claim is the peer's own. False for a legacy peer, whose UUID and key are only claims.
    var isSigned: Bool
}

extension Sighting {
    /// The sighting a beacon makes, heard from `address`; `signed` as `BeaconCheck` and
    /// `BeaconFreshness` judged it.
    init(_ beacon: Beacon, from address: IPAddress, signed: Bool) {
        self.init(
            kind: beacon.kind == .bye ? .leaving : .present, uuid: beacon.peer.uppercased(), name: beacon.name,
            versionID: beacon.versionID, instance: beacon.instance, address: address, port: beacon.port,
            interval: .seconds(beacon.interval), capabilities: beacon.capabilities,
            fingerprint: beacon.fingerprint, isSigned: signed)
    }
}
