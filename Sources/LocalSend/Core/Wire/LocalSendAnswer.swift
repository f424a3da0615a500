import HexKit

/// What a LocalSend receiver's answer to `prepare-upload` means to the sender (the statuses of
/// LocalSend's protocol 2, as its 1.18 apps answer them).
public enum LocalSendAnswer: Equatable, Sendable {
    /// 204: a message was shown; nothing is to be uploaded.
    case shown
    /// 200: the receiver took the offer; the answer's session says which files to upload.
    case uploadWanted
    /// 403: the person declined it (or the receiver refuses this sender).
    case declined
    /// 401: the receiver asks for a PIN.
    case pinRequired
    /// 409 (another transfer under way), 429 (too many requests): worth trying again later.
    case busy
    /// Any other status: the receiver failed, or answers what this version does not know.
    case unexpected(Int)

    /// What LocalSend 1.18's receiver answers an upload whose bytes are not the SHA-256 offered,
    /// on which its sender uploads the file again (`packages/core/src/http/server/v2.rs`, the
    /// upload handler; `upload_isolate.dart`).
    public static let checksumMismatch = 422
    /// Uploads of one file at most: the first, and two more after checksum mismatches (1.18's
    /// receiver takes no fourth, `MAX_UPLOAD_ATTEMPTS`, and its sender makes none).
    public static let maximumUploads = 3

    public init(status: Int) {
        self =
            switch status {
            case 204: .shown
            case 200: .uploadWanted
            case 403: .declined
            case 401: .pinRequired
            case 409, 429: .busy
            default: .unexpected(status)
            }
    }

    /// Whether trying again later may deliver: a busy or failing receiver may take it then; one
    /// that declined, wants a PIN, or answers a client error (4xx) will not.
    public var isWorthRetrying: Bool {
        switch self {
        case .shown, .uploadWanted, .declined, .pinRequired: false
        case .busy: true
        case .unexpected(let status): !(400..<500).contains(status)
        }
    }
}
