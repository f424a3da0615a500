import HexCarrier
import HexControl
import HexKit

// The control socket's reports made from the services' own values, here at the edge, so that a
// service's types can change without changing what `hexctl --json` reads.

extension ConnectionCounts {
    init(_ tally: ConnectionTally, gate: HandshakeGate.Counts) {
        self.init(
            open: tally.open, accepted: tally.accepted, refusedPerAddress: tally.refusedPerAddress,
            closedForRoom: tally.closedForRoom, closedAtDeadline: tally.closedAtDeadline,
            cutOffForPartialLines: tally.cutOffForPartialLines, closedForLongLines: tally.closedForLongLines,
            closedInHandshake: tally.closedInHandshake, tlsHandshakes: tally.tlsHandshakes,
            resumedHandshakes: tally.resumedHandshakes, refusedBeforeHandshake: gate.refused,
            fromKnownPeers: gate.known)
    }
}

extension StorageReport {
    init(_ storage: HexService.StorageSnapshot) {
        let largest = storage.usage.largestStranger
        self.init(
            inboxBytes: storage.usage.total, inboxBudget: storage.budget.inbox, strangersBytes: storage.usage.strangers,
            strangersBudget: storage.budget.strangers, largestSender: largest?.account.description,
            largestSenderBytes: largest?.bytes ?? 0, senderBudget: storage.budget.perSender,
            diskFree: storage.disk?.free, diskFloor: storage.disk?.floor, diskHardFloor: storage.disk?.hardFloor,
            refusing: storage.refusing.rawValue, reserveBytes: storage.reserveBytes)
    }
}

extension FetchReport {
    init(_ progress: FileFetcher.FileProgress) {
        self.init(
            link: progress.link, name: progress.name, state: .fetching, received: progress.received,
            size: progress.size, resumedFrom: progress.resumedFrom > 0 ? progress.resumedFrom : nil,
            milliseconds: progress.elapsed.map { $0.inSeconds * 1_000 })
        switch progress.phase {
        case .fetching: break
        case .fetched(let path, let sha256):
            state = .fetched
            self.path = path
            self.sha256 = sha256
        case .failed(let error, let partial):
            state = .failed
            message = error.description
            path = partial
        }
    }
}

extension PairingStatus {
    init(_ pending: PairingService.Pending) {
        self.init(code: pending.code, awaitingUs: pending.awaitingUs)
    }
}
