/// What went wrong on a D-Bus connection.
public enum DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bytes that are not a D-Bus message (or not one this client takes): the connection is
    /// closed.
    case malformed(String)
    /// A message past the client's bound.
    case tooLarge(Int)
    /// The bus's address cannot be used.
    case address(String)
    /// The bus refused the client (authentication), or went away.
    case connection(String)
    /// A call answered with a D-Bus error: its name and message.
    case remote(name: String, message: String)
    /// No answer within the call's time.
    case timedOut(String)

    public var description: String {
        switch self {
        case .malformed(let reason): "a malformed D-Bus message: \(reason)"
        case .tooLarge(let bytes): "a D-Bus message of \(bytes) bytes, past the bound"
        case .address(let reason): "cannot use the D-Bus address: \(reason)"
        case .connection(let reason): "D-Bus: \(reason)"
        case .remote(let name, let message): "\(name): \(message)"
        case .timedOut(let what): "no answer to \(what) in time"
        }
    }
}
