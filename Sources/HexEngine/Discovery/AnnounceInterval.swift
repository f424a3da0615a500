import HexKit

/// How often a daemon announces itself: the configured interval, longer on a crowded segment.
public enum AnnounceInterval {
    /// Peers past which the interval grows with their number.
    public static let crowd = 16

    /// The interval for a table of `peers` other daemons: the configured one up to `crowd`
    /// peers; past that, longer in proportion, so that a daemon hears about `crowd` beacons per
    /// configured interval however many daemons share the segment (a newcomer still appears at
    /// once: it asks, and is answered). It at most doubles from one beacon to the next (a
    /// receiver drops a peer after three of the intervals it last announced) and stays within
    /// what a beacon may announce.
    public static func next(configured: Duration, peers: Int, previous: Duration) -> Duration {
        let crowded = configured * (Double(max(peers, crowd)) / Double(crowd))
        let bounded = min(crowded, previous * 2, .seconds(Beacon.intervalRange.upperBound))
        return max(bounded, configured)
    }
}
