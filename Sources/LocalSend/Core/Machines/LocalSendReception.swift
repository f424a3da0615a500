import HexEngine
import HexKit

/// What a LocalSend device may upload to hexd, as LocalSend's receivers decide it: one session at
/// a time (another device's `prepare-upload` meanwhile is `409`), its files uploaded only with
/// their tokens and only from the address that prepared them (`403` otherwise), each once, or up
/// to `LocalSendAnswer.maximumUploads` times when its bytes were not the SHA-256 offered (LocalSend 1.18's
/// receiver, `packages/core/src/http/server/v2.rs`: `MAX_UPLOAD_ATTEMPTS`, `finalize_file`); a
/// session ends when the upload of its last file ended, when it is cancelled, or when nothing
/// came for `idleLimit` while no upload was under way.
///
/// Pure: the driver makes the session's id and tokens, passes the time in and acts on the answers.
/// `Sender` is what the driver knows of who prepared a session, handed back with each upload.
public struct LocalSendReception<Address: Hashable & Sendable, Sender: Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// A session under way.
    public struct Session: Sendable {
        public let id: String
        public let address: Address
        public let sender: Sender
        /// The files still to come (or coming now), by id, with their tokens.
        public var waiting: [String: (token: String, file: LocalSendFile)]
        /// The files whose bytes are coming now.
        public var uploading: Set<String> = []
        /// The uploads each file started, by id.
        public var attempts: [String: Int] = [:]
        public var lastActivity: Instant
    }

    /// Why a request is refused, with the status LocalSend's receivers answer.
    public enum Refusal: Error, Sendable, Equatable {
        /// Another session is under way (`409`).
        case busy
        /// No such session, a wrong token or file, or another address (`403`).
        case forbidden(String)

        public var status: Int {
            switch self {
            case .busy: 409
            case .forbidden: 403
            }
        }
    }

    /// A session with nothing uploaded for this long ends (an app that gave up without cancelling).
    public let idleLimit: Duration
    public private(set) var session: Session?

    public init(idleLimit: Duration = .seconds(60)) {
        self.idleLimit = idleLimit
    }

    /// `sender` at `address` prepares an upload of `files` (each with the token the driver made for it).
    /// - Throws: `Refusal.busy` while another session is under way.
    public mutating func prepare(
        id: String, files: [(token: String, file: LocalSendFile)], from address: Address, sender: Sender,
        at now: Instant
    ) throws(Refusal) -> Session {
        expire(at: now)
        guard session == nil else { throw .busy }
        let waiting = Dictionary(files.map { ($0.file.id, $0) }, uniquingKeysWith: { first, _ in first })
        let started = Session(id: id, address: address, sender: sender, waiting: waiting, lastActivity: now)
        session = started
        return started
    }

    /// A device starts uploading `fileID` of session `id`: the file and who prepared it, when the
    /// token and address are right and no upload of it is under way. The driver says when its
    /// bytes came (`finished`), or that they were not the SHA-256 offered (`mismatched`).
    /// - Throws: `Refusal.forbidden` with why.
    public mutating func upload(
        session id: String, file fileID: String, token: String, from address: Address, at now: Instant
    ) throws(Refusal) -> (file: LocalSendFile, sender: Sender) {
        expire(at: now)
        guard var current = session, current.id == id else { throw .forbidden("no such session") }
        guard current.address == address else { throw .forbidden("uploads come from the address that prepared them") }
        guard let (expected, file) = current.waiting[fileID], expected == token,
            !current.uploading.contains(fileID)
        else { throw .forbidden("no such file, or a wrong token") }
        current.uploading.insert(fileID)
        current.attempts[fileID, default: 0] += 1
        current.lastActivity = now
        session = current
        return (file, current.sender)
    }

    /// The upload of `fileID` ended (whole or not: a file is uploaded once); true when that
    /// ended the session, its last file done.
    public mutating func finished(session id: String, file fileID: String, at now: Instant) -> Bool {
        guard var current = session, current.id == id, current.uploading.remove(fileID) != nil else { return false }
        current.waiting[fileID] = nil
        current.lastActivity = now
        let done = current.waiting.isEmpty && current.uploading.isEmpty
        session = done ? nil : current
        return done
    }

    /// The bytes of `fileID` were not the SHA-256 offered: true when it may be uploaded again
    /// (with the same token), fewer than `LocalSendAnswer.maximumUploads` uploads of it having started; false
    /// when not, and the driver ends its upload as any other that failed (`finished`).
    public mutating func mismatched(session id: String, file fileID: String, at now: Instant) -> Bool {
        guard var current = session, current.id == id, current.uploading.contains(fileID),
            current.attempts[fileID, default: 0] < LocalSendAnswer.maximumUploads
        else { return false }
        current.uploading.remove(fileID)
        current.lastActivity = now
        session = current
        return true
    }

    /// Whether the upload of `fileID` in session `id` is still wanted (not cancelled).
    public func isUploading(session id: String, file fileID: String) -> Bool {
        session.map { $0.id == id && $0.uploading.contains(fileID) } == true
    }

    /// The device that prepared session `id` cancels it; false when there is no such session or
    /// another address asks.
    public mutating func cancel(session id: String, from address: Address) -> Bool {
        guard let current = session, current.id == id, current.address == address else { return false }
        session = nil
        return true
    }

    /// Ends the session when it has been idle for `idleLimit` at `now` (called by every other
    /// change; the driver calls it too, so that an abandoned session's files are kept in time).
    public mutating func expire(at now: Instant) {
        if let current = session, current.uploading.isEmpty, now - current.lastActivity >= idleLimit { session = nil }
    }
}
