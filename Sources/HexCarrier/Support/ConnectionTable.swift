import HexEngine
import HexNet
import Synchronization

/// The peer connections being served, with the two caps that keep one host, or many, from
/// taking every connection:
/// - at most `perAddress` connections from one remote address (a newcomer past it is refused);
/// - at most `total` connections in all. A newcomer past it is not refused: the connection that
///   has waited longest without completing a line is closed to make room. Connections that sit
///   idle or trickle bytes are the stalest, so they make room for senders that are quick, and
///   filling the table cannot lock honest peers out.
package final class ConnectionTable: Sendable {
    package let total: Int
    package let perAddress: Int

    /// What became of a newcomer.
    package enum Admission: Equatable {
        case admitted
        /// Admitted after closing the stalest connection (its remote end, for the log).
        case admittedByClosing(String)
        /// Refused: its address has `perAddress` connections already.
        case refused
    }

    private struct Entry {
        let channel: any ByteChannel
        let address: String
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// The connections by when they connected or last completed a line, stalest first.
        var progress = RecencyList<ObjectIdentifier>()
        var countByAddress: [String: Int] = [:]
    }

    private let state = Mutex(State())

    package init(total: Int, perAddress: Int) {
        self.total = total
        self.perAddress = perAddress
    }

    package var count: Int { state.withLock { $0.entries.count } }

    package func admit(_ channel: any ByteChannel, from address: String) -> Admission {
        let (admission, evicted) = state.withLock { state -> (Admission, (any ByteChannel)?) in
            guard state.countByAddress[address, default: 0] < perAddress else { return (.refused, nil) }
            var evicted: Entry?
            if state.entries.count >= total, let stalest = state.progress.oldest {
                evicted = Self.remove(stalest, from: &state)
            }
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, address: address)
            state.progress.touch(ObjectIdentifier(channel))
            state.countByAddress[address, default: 0] += 1
            return (evicted.map { .admittedByClosing($0.address) } ?? .admitted, evicted?.channel)
        }
        // Wakes the evicted connection's reader, which then ends and calls `remove`.
        evicted?.shutdown()
        return admission
    }

    /// Notes that a connection completed a line.
    package func progressed(_ channel: any ByteChannel) {
        state.withLock { state in
            let id = ObjectIdentifier(channel)
            if state.entries[id] != nil { state.progress.touch(id) }
        }
    }

    package func remove(_ channel: any ByteChannel) {
        state.withLock { _ = Self.remove(ObjectIdentifier(channel), from: &$0) }
    }

    private static func remove(_ id: ObjectIdentifier, from state: inout State) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: id) else { return nil }
        state.progress.remove(id)
        let remaining = state.countByAddress[entry.address, default: 1] - 1
        state.countByAddress[entry.address] = remaining > 0 ? remaining : nil
        return entry
    }
}
