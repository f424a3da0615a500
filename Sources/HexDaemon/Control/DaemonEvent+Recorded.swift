import HexControl

extension DaemonEvent {
    /// The wire form of a recorded happening, as `hexctl watch` and the page receive it.
    init(_ recorded: EventLog.Recorded) {
        let happening = recorded.happening
        self.init(
            seq: recorded.seq, kind: Kind(happening.kind), time: recorded.time, peerUUID: happening.peerUUID,
            peer: happening.peer, versionID: happening.versionID, id: happening.id, message: happening.message)
    }
}

extension DaemonEvent.Kind {
    init(_ kind: Happening.Kind) {
        self =
            switch kind {
            case .peerFound: .peerFound
            case .peerLost: .peerLost
            case .hexReceived: .hexReceived
            case .alertReceived: .alertReceived
            case .sendQueued: .sendQueued
            case .sendRetrying: .sendRetrying
            case .sendAcked: .sendAcked
            case .sendFailed: .sendFailed
            case .queryProgress: .queryProgress
            case .queryFinished: .queryFinished
            case .peerKeyMismatch: .peerKeyMismatch
            case .pairRequested: .pairRequested
            case .paired: .paired
            case .visibilityChanged: .visibilityChanged
            case .fileFetched: .fileFetched
            case .fetchFailed: .fetchFailed
            }
    }
}
