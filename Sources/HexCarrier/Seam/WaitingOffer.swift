/// An offer a device made that waits for the person's yes, with what hexctl, the page and notifications
/// tell the person of it in its carrier's words.
package struct WaitingOffer: Sendable, Equatable {
    /// What it offers, as the person reads it (`2 files, 3.1 MiB (PIN 1234)`).
    package var what: String
    /// The protocol it came by, as people know it (`Quick Share`).
    package var via: String
    /// What the person should check before taking it (`its screen shows the same PIN`); nil when there
    /// is nothing to check.
    package var check: String?
    /// Whether taking it also lets the device send from now on without asking (LocalSend pins its
    /// certificate).
    package var acceptingPairs: Bool

    package init(_ what: String, via: String, check: String? = nil, acceptingPairs: Bool) {
        (self.what, self.via, self.check, self.acceptingPairs) = (what, via, check, acceptingPairs)
    }

    /// What the `pairRequested` event says of it (`wants to send 2 files, 3.1 MiB by LocalSend`).
    package var eventMessage: String { "wants to send \(what) by \(via)" }
}
