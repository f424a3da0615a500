import HexKit

/// A carrier of another protocol (LocalSend, KDE Connect, Quick Share) as the rest of hexd sees it:
/// what it sends and how the person trusts its devices (`TrustingCarrier`), what it says of itself
/// in `hexctl status`, the devices it lists in `hexctl peers`, and looking again. The daemon holds
/// every carrier in one list (`ForeignCarriers`) and asks each in turn; it switches on none.
package protocol Carrier: TrustingCarrier, DeviceCarrier, DaemonService {
    /// What it says of itself now.
    func status() async -> CarrierStatus
    /// The devices it lists now, and the offers waiting for the person from devices it does not
    /// list, in plain values.
    func listed(at now: ContinuousClock.Instant) async -> [ListedDevice]
    /// The person asked to look for devices again (`hexctl peers --refresh`).
    func refresh() async
}

/// What a carrier says of itself in `hexctl status`, in plain values.
package struct CarrierStatus: Sendable, Equatable {
    /// The TCP port it serves its devices on.
    package var port: UInt16
    /// What its devices know hexd by, and what that is called (`fingerprint`, `device ID`).
    package var identity: String
    package var identityName: String
    /// Its figures, each with its words (`2 devices listed`).
    package var counts: [Count]
    /// What the person should know: a port taken by another program, why phones may not show.
    package var notes: [String]

    /// One figure.
    package struct Count: Sendable, Equatable {
        /// Its name in the JSON status (`devices`, `offersWaiting`).
        package var name: String
        package var count: Int
        /// The figure in words, its number in them.
        package var words: String

        /// A figure of `count` things called `singular` (or `plural`) and `what` after them
        /// (`2 devices linked`).
        package init(_ name: String, _ count: Int, _ singular: String, _ plural: String, _ what: String = "") {
            (self.name, self.count) = (name, count)
            words = "\(count) \(count == 1 ? singular : plural)" + (what.isEmpty ? "" : " \(what)")
        }
    }

    package init(port: UInt16, identity: String, identityName: String, counts: [Count], notes: [String]) {
        (self.port, self.identity, self.identityName) = (port, identity, identityName)
        (self.counts, self.notes) = (counts, notes)
    }
}

/// A device a carrier lists (or an offer waiting from one it does not), in plain values.
package struct ListedDevice: Sendable {
    package var id: String
    package var name: String
    /// Its protocol's version, as it says; empty when it says none.
    package var versionID: String
    /// Where it is reached (`address:port`), its addresses, and how long ago it was last heard.
    package var endpoint: String
    package var addresses: [String]
    package var lastHeard: Duration
    /// The certificate it proved; nil when none.
    package var fingerprint: String?
    /// Its protocol gives it no key to prove (Quick Share): nil `fingerprint` then says nothing of plaintext.
    package var keyless: Bool
    /// The person may ask it to pair (`hexctl pair`): a device of a carrier that pairs, not paired, with no
    /// pairing under way.
    package var pairable: Bool
    /// Whether it is paired, as the carrier knows; nil when the store's pin says (LocalSend).
    package var paired: Bool?
    /// The pairing under way: its code, and whether it waits for the person here.
    package var pairing: (code: String, awaitingUs: Bool)?
    /// What it offers to send, waiting for the person's yes.
    package var offer: WaitingOffer?
    /// What it says it is (`mobile`, `laptop`) and its make.
    package var deviceType: String?
    package var deviceModel: String?

    package init(
        id: String, name: String, versionID: String = "", endpoint: String, addresses: [String],
        lastHeard: Duration, fingerprint: String? = nil, keyless: Bool = false, paired: Bool?, pairable: Bool = false,
        pairing: (code: String, awaitingUs: Bool)? = nil, offer: WaitingOffer? = nil, deviceType: String? = nil,
        deviceModel: String? = nil
    ) {
        (self.id, self.name, self.versionID, self.endpoint) = (id, name, versionID, endpoint)
        (self.addresses, self.lastHeard, self.fingerprint, self.paired) = (addresses, lastHeard, fingerprint, paired)
        (self.keyless, self.pairable) = (keyless, pairable)
        (self.pairing, self.offer, self.deviceType, self.deviceModel) = (pairing, offer, deviceType, deviceModel)
    }
}
