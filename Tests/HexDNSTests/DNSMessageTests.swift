import HexDNS
import Testing

/// DNS messages as mDNS and DNS-SD use them: written and read back, read from bytes another
/// stack wrote, and refused without trapping when hostile.
@Suite(.timeLimit(.minutes(5))) struct DNSMessageTests {
    private func name(_ labels: String...) throws -> DNSName {
        try DNSName(labels: labels.map { Array($0.utf8) })
    }

    @Test func aResponseIsWrittenCompressedAndReadBack() throws {
        let service = try name("_hexd", "_tcp", "local")
        let instance = try name("Ada's laptop").appending(service)
        let host = try name("hexd-6f9619ff", "local")
        let response = DNSMessage(
            flags: DNSMessage.responseFlag | DNSMessage.authoritativeFlag,
            answers: [
                DNSRecord(name: service, data: .ptr(instance), ttl: 4_500)
            ],
            additionals: [
                DNSRecord(
                    name: instance, data: .srv(priority: 0, weight: 0, port: 18_521, target: host), ttl: 120,
                    cacheFlush: true),
                DNSRecord(
                    name: instance, data: .txt(["id": "6F9619FF-8B86-8011-B42D-00C04FC964FF", "v": "2.0.0"]),
                    ttl: 4_500, cacheFlush: true),
                DNSRecord(name: host, data: .a([10, 0, 0, 7]), ttl: 120, cacheFlush: true),
                DNSRecord(
                    name: host, data: .aaaa([0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1]), ttl: 120,
                    cacheFlush: true),
                DNSRecord(
                    name: instance, data: .nsec(next: instance, types: [DNSType.txt, DNSType.srv]), ttl: 120,
                    cacheFlush: true),
            ])
        let bytes = try response.encoded()
        let read = try DNSMessage.decode(bytes)
        #expect(read == response)
        #expect(read.isResponse && !read.isStandardQuery)
        // "_hexd._tcp.local" and "local" are written once each, then pointed at.
        #expect(bytes.count < 330, "\(bytes.count) bytes: names are compressed")
        #expect(read.additionals[1].data.keyValues?["id"] == "6F9619FF-8B86-8011-B42D-00C04FC964FF")
    }

    @Test func aQueryWithTheUnicastBitAndAKnownAnswer() throws {
        let service = try name("_hexd", "_tcp", "local")
        let known = DNSRecord(name: service, data: .ptr(try name("Grace").appending(service)), ttl: 3_000)
        let query = DNSMessage(
            questions: [DNSQuestion(name: service, type: DNSType.ptr, unicastResponse: true)],
            answers: [known])
        let read = try DNSMessage.decode(try query.encoded())
        #expect(read.isStandardQuery)
        #expect(read.questions == query.questions && read.questions[0].unicastResponse)
        #expect(read.questions[0].isAnswered(by: known))
        #expect(read.answers == [known])
    }

    /// python-zeroconf 0.47 writes an NSEC bitmap's window and length as two-byte numbers: that
    /// record is kept as its bytes (its next name written out in full, so that they mean the same in
    /// any message), and the rest of its response read as sent.
    @Test func aMiswrittenNSECCostsItsRecordAlone() throws {
        let host = try name("Android_1", "local")
        var bytes: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 2, 0, 0, 0, 0]
        bytes += try DNSMessage(answers: [DNSRecord(name: host, data: .a([10, 73, 0, 3]), ttl: 120)]).encoded()
            .dropFirst(12)
        // The host's NSEC, as zeroconf writes it for a host with an A record alone: the name pointer
        // to the A record's name (at 12), type 47, class IN, TTL 4500, 7 bytes: the next name (the
        // pointer), window 0 and length 1 as two bytes each, and the bitmap (A).
        bytes += [0xC0, 12, 0, 47, 0x80, 1, 0, 0, 0x11, 0x94, 0, 7, 0xC0, 12, 0, 0, 0, 1, 0x40]
        let read = try DNSMessage.decode(bytes)
        #expect(read.answers.count == 2)
        #expect(read.answers[0].data == .a([10, 73, 0, 3]))
        let spelled = [9] + Array("Android_1".utf8) + [5] + Array("local".utf8) + [0]
        #expect(read.answers[1].data == .other(type: DNSType.nsec, bytes: spelled + [0, 0, 0, 1, 0x40]))
        #expect(try DNSMessage.decode(try read.encoded()) == read, "written again, it reads the same")
    }

    /// A miswritten NSEC whose next name points at another record's data: written again, that
    /// record's name is compressed and the data moves, so the raw pointer would name something else
    /// (the read-back property FuzzDNSMessage checks failed on such input).
    @Test func aMiswrittenNSECReadsTheSameOnceWrittenAgain() throws {
        var bytes: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 3, 0, 0, 0, 0]
        bytes += [1, 97, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 10, 0, 0, 1]
        // Its data, at 42, reads as the name "a".
        bytes += [1, 97, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 97, 0, 0]
        bytes += [0xC0, 12, 0, 47, 0, 1, 0, 0, 0, 0, 0, 7, 0xC0, 42, 0, 0, 0, 1, 0x40]
        let read = try DNSMessage.decode(bytes)
        #expect(read.answers[2].data == .other(type: DNSType.nsec, bytes: [1, 97, 0, 0, 0, 0, 1, 0x40]))
        #expect(try DNSMessage.decode(try read.encoded()) == read)
    }

    /// Names hexd writes read back however deep their compression goes: each of 66 questions ends
    /// in the one before it, so the last is written as one label and a chain of 65 pointers.
    @Test func aLongChainOfCompressedNamesReadsBack() throws {
        var bytes: [UInt8] = [0, 0, 0, 0, 0, 66, 0, 0, 0, 0, 0, 0]
        for count in 1...66 { bytes += Array(repeating: [1, 97], count: count).flatMap { $0 } + [0, 0, 1, 0, 1] }
        let read = try DNSMessage.decode(bytes)
        #expect(read.questions.count == 66)
        #expect(try DNSMessage.decode(try read.encoded()) == read)
    }

    /// An NSEC whose next name does not read (here a pointer to 0x61, a label of an unknown kind) is
    /// as malformed as any record whose name does not read: kept as its bytes, the pointer would
    /// name something else in another message (found by FuzzDNSMessage).
    @Test func anNSECWhoseNextNameDoesNotReadRefusesItsMessage() throws {
        var bytes: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0]
        // At 12: the name "a" (a pointer to 13 would read 0x61, no label's kind), NSEC, IN, TTL 0,
        // 5 bytes: the next name as a pointer to 13, window 0, length 1, a bitmap.
        bytes += [1, 97, 0, 0, 47, 0, 1, 0, 0, 0, 0, 0, 5, 0xC0, 13, 0, 1, 0x40]
        #expect(throws: DNSError.self) { try DNSMessage.decode(bytes) }
        bytes[bytes.count - 4] = 12
        let read = try DNSMessage.decode(bytes)
        #expect(
            read.answers.first?.data == .nsec(next: try name("a"), types: [DNSType.a]), "pointing at a name, it reads")
    }

    /// A response as other stacks write it: the instance name pointing into the question's name.
    @Test func namesPointingBackwardsAreFollowed() throws {
        var bytes: [UInt8] = [0, 0, 0x84, 0, 0, 1, 0, 1, 0, 0, 0, 0]
        // Question at 12: _hexd._tcp.local PTR IN.
        bytes += [5] + Array("_hexd".utf8) + [4] + Array("_tcp".utf8) + [5] + Array("local".utf8) + [0, 0, 12, 0, 1]
        // Answer: a pointer to offset 12, PTR, IN, TTL 4500, data "Ada" + pointer to 12.
        bytes += [0xC0, 12, 0, 12, 0, 1, 0, 0, 0x11, 0x94, 0, 6, 3] + Array("Ada".utf8) + [0xC0, 12]
        let message = try DNSMessage.decode(bytes)
        #expect(message.answers.first?.data == .ptr(try name("Ada", "_hexd", "_tcp", "local")))
        #expect(message.answers.first?.name == (try name("_HEXD", "_tcp", "LOCAL")), "names compare without case")
        #expect(message.answers.first?.ttl == 4_500)
    }

    @Test func hostileMessagesAreRefused() throws {
        let header: [UInt8] = [0, 0, 0x84, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        let refused: [(String, [UInt8])] = [
            ("empty", []),
            ("a header cut short", [0, 0, 0x84]),
            ("a pointer to itself", header + [0xC0, 12, 0, 12, 0, 1]),
            ("a pointer forwards", header + [0xC0, 14, 0, 0, 0, 12, 0, 1]),
            ("a label past the end", header + [40, 0x61]),
            ("a label of the reserved kind", header + [0x40, 0, 0, 12, 0, 1]),
            ("counts that lie", [0, 0, 0x84, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]),
            (
                "a name over 255 bytes",
                header
                    + Array(repeating: [63] + [UInt8](repeating: 0x61, count: 63), count: 5)
                    .flatMap { $0 } + [0, 0, 12, 0, 1]
            ),
            ("a message over 9000 bytes", header + [UInt8](repeating: 0, count: 9_000)),
            (
                "an A record of 5 bytes",
                [
                    0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5,
                    1, 2, 3, 4, 5,
                ]
            ),
        ]
        for (why, bytes) in refused {
            #expect(throws: DNSError.self, "\(why)") { try DNSMessage.decode(bytes) }
        }
    }

    @Test func namesAreBounded() {
        #expect(throws: DNSError.self) { try DNSName(String(repeating: "a", count: 64)) }
        #expect(throws: DNSError.self) { try DNSName("") }
        #expect(throws: DNSError.self) {
            try DNSName(labels: Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 63), count: 4))
        }
        #expect(
            (try? DNSName(labels: Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 62), count: 4)))
                != nil, "254 bytes with the root")
    }

    @Test func txtKeysAreReadAsDNSSDSays() {
        let data = DNSRecordData.txt([
            Array("ID=first".utf8), Array("id=second".utf8), Array("flag".utf8),
            Array("=nokey".utf8), Array("empty=".utf8),
        ])
        #expect(data.keyValues == ["id": "first", "flag": "", "empty": ""])
        #expect(DNSRecordData.a([1, 2, 3, 4]).keyValues == nil)
    }
}
