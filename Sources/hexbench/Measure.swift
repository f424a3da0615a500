import HexKit

/// Seconds taken by `body`, on the monotonic clock.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return (clock.now - start).inSeconds
}
