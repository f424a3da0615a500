import COpenSSL

/// The cryptography of pairing (Protocol.md, section 12): nonces, the commitment to a nonce,
/// and the verification code both users compare.
///
/// The initiator commits to its nonce before it sees the responder's, and the responder sends
/// its nonce before it sees the initiator's. A relay in the middle has shown each side a key of
/// its own before either nonce exists, so it cannot steer the two codes to match: it succeeds
/// with one chance in 2^32 per attempt, and each attempt shows both users a code.
public enum PairingCode {
    /// Bytes in a nonce.
    public static let nonceBytes = 16

    /// A fresh random nonce.
    /// - Throws: `TLSError` when the system's random source fails.
    public static func nonce() throws(TLSError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: nonceBytes)
        guard RAND_bytes(&bytes, Int32(nonceBytes)) == 1 else { throw .openSSL("make a pairing nonce") }
        return bytes
    }

    /// The SHA-256 of a nonce, as 64 lowercase hex digits.
    public static func commitment(to nonce: [UInt8]) -> String? {
        SHA256.hash(nonce).map(Fingerprint.hex)
    }

    /// The code both sides show: the first 8 hex digits (uppercase) of the SHA-256 of the
    /// initiator's fingerprint, the responder's, the initiator's nonce and the responder's
    /// nonce, as bytes, in that order. Nil only when libcrypto cannot hash.
    public static func verificationCode(
        initiator: Fingerprint, responder: Fingerprint, initiatorNonce: [UInt8], responderNonce: [UInt8]
    ) -> String? {
        SHA256.hash(initiator.bytes + responder.bytes + initiatorNonce + responderNonce).map {
            String(Fingerprint.hex($0).prefix(8)).uppercased()
        }
    }

    /// A nonce from 32 hex digits; nil for anything else.
    public static func nonce(hex: String) -> [UInt8]? {
        Fingerprint.bytes(hex: hex, count: nonceBytes)
    }

    /// A nonce as 32 lowercase hex digits.
    public static func hex(_ nonce: [UInt8]) -> String { Fingerprint.hex(nonce) }
}
