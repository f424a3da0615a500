import HexCarrier
import HexEngine

/// A carrier as sending and trust see it: the form of its devices' IDs, and the carrier, or why a
/// send cannot go now.
struct CarrierEntry {
    let kind: any SendingCarrier.Type
    /// Nil while it is not up.
    let carrier: (any SendingCarrier)?
    /// Why a send to one of its devices cannot go while it is not up: for good when it is off,
    /// for a while when it is starting (the outbox tries again).
    let missing: SendError
    /// Whether one of its devices may be named by its full ID now or soon (it is not off).
    let takesIDs: Bool

    /// A carrier that is always up (hexd's own protocol).
    init(_ carrier: any SendingCarrier) {
        (kind, self.carrier, takesIDs) = (type(of: carrier), carrier, true)
        missing = .undelivered("\(type(of: carrier).name) is starting")
    }

    init(kind: any SendingCarrier.Type, carrier: (any SendingCarrier)?, missing: SendError, takesIDs: Bool) {
        (self.kind, self.carrier, self.missing, self.takesIDs) = (kind, carrier, missing, takesIDs)
    }

    /// The carrier, up.
    /// - Throws: `missing` while it is not.
    func up() throws(SendError) -> any SendingCarrier {
        guard let carrier else { throw missing }
        return carrier
    }
}
