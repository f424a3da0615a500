import HexDNS
import Testing

/// RFC 6762, section 8.2: the simultaneous-probe tie-break.
@Suite(.timeLimit(.minutes(5))) struct ProbeTieBreakTests {
    private let host = (try? DNSName(labels: [Array("cheshire".utf8), Array("local".utf8)]))
    private let target = (try? DNSName(labels: [Array("b".utf8), Array("local".utf8)]))

    private func address(_ bytes: [UInt8], ttl: UInt32 = 120, cacheFlush: Bool = true) throws -> DNSRecord {
        DNSRecord(name: try #require(host), data: .a(bytes), ttl: ttl, cacheFlush: cacheFlush)
    }

    /// The RFC's own example: 169.254.200.50 sorts after 169.254.99.200 and wins.
    @Test func theRFCsExampleAddressWins() throws {
        let early = try address([169, 254, 99, 200])
        let late = try address([169, 254, 200, 50])
        #expect(ProbeTieBreak(ours: [late], theirs: [early]) == .oursWin)
        #expect(ProbeTieBreak(ours: [early], theirs: [late]) == .theirsWin)
    }

    /// Today's code compared whole encoded records, TTL and cache-flush bit included: records
    /// with the same data then looked different, and a loopback of one's own probe could lose.
    @Test func theTTLAndTheCacheFlushBitTakeNoPart() throws {
        let ours = try address([10, 0, 0, 1], ttl: 120, cacheFlush: true)
        let theirs = try address([10, 0, 0, 1], ttl: 4_500, cacheFlush: false)
        #expect(ProbeTieBreak(ours: [ours], theirs: [theirs]) == .same)
    }

    /// Class first, then type, then the data: a record of a greater type wins whatever its data.
    @Test func classThenTypeThenData() throws {
        let host = try #require(host)
        let target = try #require(target)
        let address = DNSRecord(name: host, data: .a([255, 255, 255, 255]), ttl: 120)
        let service = DNSRecord(name: host, data: .srv(priority: 0, weight: 0, port: 1, target: target), ttl: 120)
        #expect(ProbeTieBreak.precedes(address, service), "type 1 sorts before type 33, data aside")
        var chaos = address
        chaos.recordClass = 3
        #expect(ProbeTieBreak.precedes(service, chaos), "class 3 sorts after class 1, type aside")
        let lowerPort = DNSRecord(name: host, data: .srv(priority: 0, weight: 0, port: 1, target: target), ttl: 9)
        let higherPort = DNSRecord(name: host, data: .srv(priority: 0, weight: 0, port: 2, target: target), ttl: 1)
        #expect(ProbeTieBreak(ours: [higherPort], theirs: [lowerPort]) == .oursWin)
    }

    /// Each side is sorted first; the first pair that differs decides; a longer list that starts
    /// with the other wins.
    @Test func listsAreSortedThenComparedPairByPair() throws {
        let one = try address([10, 0, 0, 1])
        let two = try address([10, 0, 0, 2])
        let three = try address([10, 0, 0, 3])
        #expect(ProbeTieBreak(ours: [three, one], theirs: [one, two]) == .oursWin)
        #expect(ProbeTieBreak(ours: [two, one], theirs: [one, two]) == .same)
        #expect(ProbeTieBreak(ours: [one], theirs: [two, one]) == .theirsWin)
        #expect(ProbeTieBreak(ours: [one, two], theirs: [one]) == .oursWin)
    }

    /// Names in the data are compared uncompressed: the bytes do not depend on what else a
    /// message holds.
    @Test func namesInTheDataAreComparedWhole() throws {
        let target = try #require(target)
        let bytes = DNSRecordData.ptr(target).uncompressedBytes
        #expect(bytes == [1, UInt8(ascii: "b"), 5] + Array("local".utf8) + [0])
    }
}
