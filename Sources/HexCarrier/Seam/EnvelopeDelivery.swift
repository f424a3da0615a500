import HexKit
import HexNet
import HexTLS

/// What happened to an envelope sent to a device, whichever protocol carried it.
package struct EnvelopeDelivery: Sendable {
    /// The Ack's status; nil when no Ack was awaited (no messageID).
    package var status: AckStatus?
    package var message: String
    package var elapsed: Duration
    /// The id the receiver gave the hex, when its Ack says (hexd 2.0 and later).
    package var hexID: String?
    /// The key the receiver proved over TLS; nil over plaintext.
    package var peerKey: Fingerprint?
    /// Where the receiver was reached (the first of the candidates that answered).
    package var endpoint: Endpoint

    package init(
        status: AckStatus?, message: String, elapsed: Duration, hexID: String? = nil, peerKey: Fingerprint? = nil,
        endpoint: Endpoint
    ) {
        (self.status, self.message, self.elapsed, self.hexID) = (status, message, elapsed, hexID)
        (self.peerKey, self.endpoint) = (peerKey, endpoint)
    }
}
