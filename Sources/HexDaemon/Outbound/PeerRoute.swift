import HexKit
import HexNet

/// How one send reaches its peer, resolved once and carried by sends, pairing and the outbox
/// alike: the peer, the addresses to try in order, the dialect, and the key to prove.
struct PeerRoute: Sendable {
    /// The peer in the table; nil for an address the user typed that no beacon announced.
    var peer: PeerTable.Peer?
    /// Where to dial, in order: a wrong one costs a dial, not the send (`EnvelopeSender.Channel.open`).
    var endpoints: [Endpoint]
    /// The destination as the user reads it: its name and first address, or the address alone.
    var label: String
    var dialect: Dialect
    var security: EnvelopeSender.Security
    /// The key pinned to the peer when the route was resolved; nil when none was.
    var pin: PeerPin?
    /// The peer UUID a key pinned before device IDs were derived from keys belongs to, when the
    /// route reaches that key under its derived ID: a delivery that proves it moves the pin.
    var legacyPinOwner: String?
}
