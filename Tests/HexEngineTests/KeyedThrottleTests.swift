import HexEngine
import Testing

/// The once-a-minute-per-sender log: one event per key per interval, for a bounded number of keys.
@Suite(.timeLimit(.minutes(5))) struct KeyedThrottleTests {
    @Test func oneEventPerKeyPerInterval() {
        var throttle = KeyedThrottle<String>(interval: .seconds(60), capacity: 8)
        let start = ContinuousClock.now
        let admitted = [
            throttle.admit("a", at: start),
            throttle.admit("a", at: start + .seconds(59)),  // the same key within the interval
            throttle.admit("b", at: start + .seconds(1)),  // another key has its own interval
            throttle.admit("a", at: start + .seconds(60)),  // the interval passed
        ]
        #expect(admitted == [true, false, true, true])
    }

    @Test func aFloodOfKeysStaysWithinTheCapacity() {
        var throttle = KeyedThrottle<Int>(interval: .seconds(60), capacity: 4)
        let start = ContinuousClock.now
        let first = (0..<4).map { throttle.admit($0, at: start) }
        #expect(first == [true, true, true, true])
        let admitted = [
            // Full of keys still within their interval: a new key is let through, not remembered.
            throttle.admit(100, at: start),
            throttle.admit(100, at: start + .seconds(1)),
            // The keys remembered are kept.
            throttle.admit(0, at: start + .seconds(1)),
            // Once the old keys' interval passed, they make room: a new key is remembered again.
            throttle.admit(200, at: start + .seconds(61)),
            throttle.admit(200, at: start + .seconds(62)),
        ]
        #expect(admitted == [true, true, false, true, false])
    }
}
