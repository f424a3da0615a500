/// What happened in the daemon, as its event log records it and `hexctl watch` streams it (the
/// control protocol's `DaemonEvent.Kind`): one vocabulary for the services that say it and the
/// edges that write it.
public enum EventKind: String, Sendable, Codable, CaseIterable {
    case peerFound, peerLost, hexReceived, alertReceived
    /// A send was committed to the outbox (`id`: its messageID; `message`: when it expires).
    case sendQueued
    /// An attempt at a queued send failed in a way worth retrying (`message`: the attempt, why, and when the
    /// next is).
    case sendRetrying
    /// The peer took a send (`message`: the Ack's status, or "sent" for a legacy peer); it left the outbox.
    case sendAcked
    /// A send ended undelivered (`message`: the refusal, "expired: …" or "cancelled"); it left the outbox.
    case sendFailed
    /// A share query got one more link (`message`: "answered/total").
    case queryProgress
    /// A share query ended (`message`: "delivered", "cancelled" or why it failed).
    case queryFinished
    /// A beacon claimed a peer's UUID with a key other than the one pinned to it (`message`
    /// says where from and which keys); it is not used for sending.
    case peerKeyMismatch
    /// A peer asked to pair (`message`: the verification code to compare).
    case pairRequested
    /// Pairing with a peer completed on this side (`message`: the verification code).
    case paired
    /// The daemon hid or showed itself (`message`: `visible`, `hidden`, or until when it is visible).
    case visibilityChanged
    /// A shared file was fetched whole into the downloads folder (`id`: the hex's id;
    /// `message`: the path it landed at).
    case fileFetched
    /// A fetch stopped (`id`: the hex's id; `message`: the file and why; a partial file is kept).
    case fetchFailed
    /// Files go to a LocalSend device (`id`: the share's query id; `message`: the file being sent
    /// and the bytes sent of all, `NAME: SENT/TOTAL`).
    case filesSending
}
