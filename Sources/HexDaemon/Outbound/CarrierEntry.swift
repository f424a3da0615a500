import HexCarrier
import HexEngine

/// A carrier as sending and trust see it: its kind and the form of its devices' IDs, and the
/// carrier, or why a send cannot go now.
struct CarrierEntry {
    let kind: any SendingCarrier.Type
    let state: State

    /// Where the carrier is.
    enum State {
        case up(any SendingCarrier)
        /// Being started: what is sent to its devices waits for it.
        case starting
        /// Not running, and why (`--localsend off`, or what stopped its start).
        case off(String)
    }

    /// A carrier that is up (hexd's own protocol always is).
    init(_ carrier: any SendingCarrier) {
        (kind, state) = (type(of: carrier), .up(carrier))
    }

    init(kind: any SendingCarrier.Type, state: State) {
        (self.kind, self.state) = (kind, state)
    }

    /// The carrier; nil while it is not up.
    var carrier: (any SendingCarrier)? { if case .up(let carrier) = state { carrier } else { nil } }

    /// Whether one of its devices may be named by its full ID now or soon (it is not off).
    var takesIDs: Bool { if case .off = state { false } else { true } }

    /// The carrier, up.
    /// - Throws: why a send to one of its devices cannot go while it is not: `.undelivered` for a
    ///   while when it is starting (the outbox tries again), `.refused` for good when it is off.
    func up() throws(SendError) -> any SendingCarrier {
        switch state {
        case .up(let carrier): carrier
        case .starting: throw .undelivered("\(kind.name) is starting")
        case .off(let why): throw .refused("\(kind.name) is off here (\(why))")
        }
    }
}
