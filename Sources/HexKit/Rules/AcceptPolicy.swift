/// Whose hexes and alerts a daemon stores and shows (`hexd --accept`).
public enum AcceptPolicy: String, Sendable, CaseIterable {
    /// Only peers whose key the user confirmed with a verification code (`hexctl pair`).
    case paired
    /// Peers whose key is pinned already: paired ones, and ones met before over TLS (a hex went
    /// to them, or came from them while anyone was accepted). A new key is refused, not pinned.
    case known
    /// Anyone: a new key is pinned on first use, and legacy peers are heard over plaintext.
    case anyone

    /// Whether a sender known this way gets through.
    public func admits(_ trust: SenderTrust) -> Bool {
        switch self {
        case .anyone: true
        case .known: trust == .pinned || trust == .paired
        case .paired: trust == .paired
        }
    }

    /// The senders it admits, for a refusal's words.
    public var admitted: String {
        switch self {
        case .paired: "paired peers"
        case .known: "peers it already knows by their key"
        case .anyone: "anyone"
        }
    }
}
