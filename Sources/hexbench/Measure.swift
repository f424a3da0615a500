/// Seconds taken by `body`, on the monotonic clock.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    let elapsed = (clock.now - start).components
    return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
}
