import HexCarrier
import HexKit

/// Something a peer sent that was kept, or that asks this daemon's user for something, as the
/// services acting on arrivals take it (the on-receive hook, auto-fetch, desktop notifications):
/// the value itself, so that none of them reads it back from the store. What the control socket
/// and the page show of it is a `DaemonEvent`, made at that edge.
enum Arrival: Sendable {
    /// A hex stored in the inbox, as it was stored.
    case hex(Hex)
    /// An Alert kept: the sender as the user reads it, and what it says.
    case alert(from: String, message: String)
    /// A pairing request, with the code both users compare.
    case pairRequest(name: String, peerUUID: String, code: String)
    /// A device's offer waiting for the user's yes, in its carrier's words.
    case offerWaiting(name: String, peerUUID: String, offer: WaitingOffer)
}
