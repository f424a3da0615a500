import HexCarrier
import HexNet
import HexTLS
import Synchronization

/// TLS connections to peers kept open after an acknowledged send, so that the next send to the
/// same peer skips the TCP and TLS handshakes.
///
/// A connection is kept only between two exchanges that each ended with an Ack, so nothing is
/// half-read on it. It is keyed by where it goes and the key it proved; it lasts `idleLifetime`
/// (well under a receiver's idle timeout) and at most `capacity` are kept, the oldest making room.
/// A kept connection the peer has closed meanwhile is noticed before it is written to.
final class ConnectionPool: DaemonService {
    struct Key: Hashable, Sendable {
        var endpoint: Endpoint
        var peerKey: Fingerprint
    }

    private struct Kept {
        var channel: EnvelopeSender.Channel
        var expires: ContinuousClock.Instant
    }

    let capacity: Int
    let idleLifetime: Duration
    private let kept = Mutex<[Key: Kept]>([:])
    /// Tells the sweeper that a connection is kept: with none, it sleeps without a timer.
    private let keptSignal = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(capacity: Int = 64, idleLifetime: Duration = .seconds(15)) {
        self.capacity = capacity
        self.idleLifetime = idleLifetime
    }

    /// A kept connection to `key`, still open, taken out of the pool (the caller owns it).
    func take(_ key: Key, at now: ContinuousClock.Instant = .now) -> EnvelopeSender.Channel? {
        let found = kept.withLock { $0.removeValue(forKey: key) }
        guard let found, found.expires > now, found.channel.socket.isQuietAndOpen else { return nil }
        return found.channel
    }

    /// Keeps `channel` for the next send to its peer (replacing one kept before, which closes).
    func keep(_ channel: EnvelopeSender.Channel, at now: ContinuousClock.Instant = .now) {
        guard let peerKey = channel.peerKey else { return }
        let key = Key(endpoint: channel.endpoint, peerKey: peerKey)
        kept.withLock { kept in
            kept = kept.filter { $0.value.expires > now }
            if kept[key] == nil, kept.count >= capacity,
                let oldest = kept.min(by: { $0.value.expires < $1.value.expires })
            {
                kept[oldest.key] = nil
            }
            kept[key] = Kept(channel: channel, expires: now + idleLifetime)
        }
        keptSignal.continuation.yield()
    }

    /// How many connections are kept.
    var count: Int { kept.withLock { $0.count } }

    /// Closes each kept connection at the end of its lifetime, until cancelled, so that an idle
    /// daemon holds none for long; with none kept, nothing wakes it.
    func run() async {
        for await _ in keptSignal.stream {
            while let next = kept.withLock({ $0.values.map(\.expires).min() }) {
                guard (try? await Task.sleep(until: next, tolerance: .milliseconds(500), clock: .continuous)) != nil
                else { return }
                let now = ContinuousClock.now
                kept.withLock { $0 = $0.filter { $0.value.expires > now } }
            }
        }
    }
}
