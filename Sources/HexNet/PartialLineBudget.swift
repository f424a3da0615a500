import Synchronization

/// A bound on the memory that all connections together hold for lines they have begun.
///
/// Each connection reports what it holds after every read. When the total passes `limit`, the
/// largest holders are cut off first (their connections shut down, so their reads end) until the
/// rest fits: many connections each holding a large partial line cannot exhaust memory, and the
/// connections sending small lines at a normal pace are the last to be touched. A connection
/// that was cut off is counted until it has actually let go of its memory (`release`), so the
/// total is what is really held, not what will be.
public final class PartialLineBudget: Sendable {
    public let limit: Int
    /// Called with each cut-off connection's remote end and the bytes it held (for the log).
    private let onCut: @Sendable (Endpoint?, Int) -> Void

    private struct Holder {
        let channel: any ByteChannel
        var bytes: Int
        /// Shut down already; waiting for its task to end and release it.
        var cut = false
    }

    private struct State {
        var total = 0
        var holders: [ObjectIdentifier: Holder] = [:]
    }

    private let state = Mutex(State())

    public init(limit: Int, onCut: @escaping @Sendable (Endpoint?, Int) -> Void = { _, _ in }) {
        self.limit = limit
        self.onCut = onCut
    }

    /// All memory held for begun lines now, cut-off connections included.
    public var total: Int { state.withLock(\.total) }

    /// Records that `channel` holds `bytes`; cuts off the largest holders when the
    /// total passes the limit.
    public func hold(_ bytes: Int, by channel: any ByteChannel) {
        let cut = state.withLock { state -> [Holder] in
            let id = ObjectIdentifier(channel)
            state.total += bytes - (state.holders[id]?.bytes ?? 0)
            if bytes > 0 {
                state.holders[id, default: Holder(channel: channel, bytes: 0)].bytes = bytes
            } else {
                state.holders[id] = nil
            }
            guard state.total > limit else { return [] }
            var excess = state.total - limit
            var cut: [Holder] = []
            for (id, holder) in state.holders.filter({ !$0.value.cut }).sorted(by: { $0.value.bytes > $1.value.bytes })
            {
                guard excess > 0 else { break }
                state.holders[id]?.cut = true
                excess -= holder.bytes
                cut.append(holder)
            }
            return cut
        }
        for holder in cut {
            onCut(holder.channel.remoteEndpoint, holder.bytes)
            holder.channel.shutdown()
        }
    }

    /// Forgets a connection that has ended (its memory is freed).
    public func release(_ channel: any ByteChannel) {
        hold(0, by: channel)
    }
}
