import HexCarrier
import HexControl

extension DaemonEvent {
    /// The wire form of a recorded happening, as `hexctl watch` and the page receive it.
    init(_ recorded: EventLog.Recorded) {
        let happening = recorded.happening
        self.init(
            seq: recorded.seq, kind: happening.kind, time: recorded.time, peerUUID: happening.peerUUID,
            peer: happening.peer, versionID: happening.versionID, id: happening.id, message: happening.message)
    }
}
