/// Why a send did not end with the peer storing (or receiving) what was sent.
public enum SendError: Error, Equatable, Sendable, CustomStringConvertible {
    /// It may not have arrived: no connection, closed early, no answer in time, or the receiver
    /// could not store it (Ack `failed`). Trying again later may work.
    case undelivered(String)
    /// The peer answered that it will not take it: the sender is blocked there, or the Ack is
    /// `rejected`, `unsupported` or `invalid`. Trying again will not help.
    case refused(String)

    public var description: String {
        switch self {
        case .undelivered(let reason), .refused(let reason): reason
        }
    }
}
