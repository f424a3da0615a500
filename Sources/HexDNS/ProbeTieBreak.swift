/// Who keeps a name two hosts probe for at once (RFC 6762, section 8.2).
public enum ProbeTieBreak: Sendable, Equatable {
    /// This host's records sort later: it goes on probing, the other defers.
    case oursWin
    /// The other host's records sort later: this host waits a second and probes again.
    case theirsWin
    /// The same records (this host's own probe heard back, or a host publishing the same data):
    /// no conflict.
    case same

    /// Compares the records two hosts propose for one name, as section 8.2 orders: each side's
    /// records sorted, then compared pair by pair, the first pair that differs deciding; when one
    /// list is the start of the other, the longer wins.
    public init(ours: [DNSRecord], theirs: [DNSRecord]) {
        let ours = ours.sorted(by: Self.precedes)
        let theirs = theirs.sorted(by: Self.precedes)
        for (mine, other) in zip(ours, theirs) {
            if Self.precedes(mine, other) {
                self = .theirsWin
                return
            }
            if Self.precedes(other, mine) {
                self = .oursWin
                return
            }
        }
        self = ours.count == theirs.count ? .same : ours.count > theirs.count ? .oursWin : .theirsWin
    }

    /// Whether `first` sorts before `second` (section 8.2.1): by class without the cache-flush
    /// bit, then by type, then by the bytes of the data (names in it uncompressed), compared as
    /// unsigned bytes, a prefix sorting first. The name and TTL take no part.
    public static func precedes(_ first: DNSRecord, _ second: DNSRecord) -> Bool {
        if first.recordClass != second.recordClass { return first.recordClass < second.recordClass }
        if first.type != second.type { return first.type < second.type }
        return first.data.uncompressedBytes.lexicographicallyPrecedes(second.data.uncompressedBytes)
    }
}

extension DNSRecordData {
    /// The data as a record carries it (its RDATA), with no name compressed.
    public var uncompressedBytes: [UInt8] {
        var writer = DNSWriter(compressing: false)
        writer.data(self)
        return writer.bytes
    }
}
