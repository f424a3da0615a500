import HexKit
import LocalSendCore
import Testing

/// LocalSend's JSON as hexd reads and writes it: what the apps send is read, what hexd writes
/// reads back the same, and nothing a stranger sends can trap or pass a bound.
@Suite(.timeLimit(.minutes(1))) struct LocalSendWireTests {
    private static let announcement = Array(
        #"""
        {"alias":"Nice Orange","version":"2.2","deviceModel":"Pixel 8","deviceType":"mobile",
        "fingerprint":"A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90","port":53317,
        "protocol":"https","download":false,"announce":true}
        """#.utf8)

    @Test func anAnnouncementOfTheAppsIsRead() throws {
        let device = try #require(LocalSendDevice.decode(Self.announcement))
        #expect(device.alias == "Nice Orange" && device.version == "2.2" && device.deviceModel == "Pixel 8")
        #expect(device.deviceType == .mobile && device.port == 53_317 && device.scheme == .https)
        #expect(device.fingerprint.hasPrefix("A1B2C3D4") && device.download == false && device.announce == true)
    }

    @Test func missingAndUnknownFieldsTakeTheAppsDefaults() throws {
        let device = try #require(
            LocalSendDevice.decode(
                Array(#"{"alias":"Old","fingerprint":"x","deviceType":"toaster","deviceModel":null,"port":70000}"#.utf8)
            ))
        #expect(device.version == "1.0", "protocol 1 says no version")
        #expect(device.deviceType == .desktop, "an unknown type reads as desktop, as the apps read it")
        #expect(device.deviceModel == nil && device.port == nil && device.scheme == nil && device.announce == nil)
    }

    @Test(arguments: [
        #"{"fingerprint":"x"}"#, #"{"alias":"A"}"#, #"{"alias":"A","fingerprint":""}"#,
        #"{"alias":1,"fingerprint":"x"}"#,
        #"["alias"]"#, "", "{", #"{"alias":"A","fingerprint":"\#(String(repeating: "f", count: 129))"}"#,
    ])
    func aTextWithoutAnAliasOrAFingerprintIsNoDevice(_ text: String) {
        #expect(LocalSendDevice.decode(Array(text.utf8)) == nil)
    }

    @Test func longFieldsAreCutAndLongTextsRefused() throws {
        let long = String(repeating: "é", count: 300)
        let device = try #require(
            LocalSendDevice.decode(Array(#"{"alias":"\#(long)","fingerprint":"x","deviceModel":"\#(long)"}"#.utf8)))
        #expect(device.alias.utf8.count <= LocalSendDevice.maximumAliasBytes && device.alias.hasPrefix("éé"))
        #expect((device.deviceModel?.utf8.count ?? .max) <= LocalSendDevice.maximumModelBytes)
        let padded = #"{"alias":"A","fingerprint":"x"}"# + String(repeating: " ", count: LocalSendDevice.maximumSize)
        #expect(LocalSendDevice.decode(Array(padded.utf8)) == nil)
    }

    @Test func whatHexdWritesReadsBackTheSame() throws {
        let device = LocalSendDevice(
            alias: "hexd \"lab\"", version: "2.2", deviceModel: nil, deviceType: .headless,
            fingerprint: String(repeating: "AB", count: 32), port: 53_318, scheme: .https, announce: true)
        #expect(LocalSendDevice.decode(device.encoded()) == device)
        let request = LocalSendUploadRequest(
            info: device,
            files: [
                LocalSendFile(
                    id: "1", fileName: "links.txt", size: 27, fileType: "text/plain",
                    preview: "https://example.com/a\nline 2")
            ])
        #expect(LocalSendUploadRequest.decode(request.encoded()) == request)
        let session = LocalSendUploadSession(sessionID: "s-1", tokens: [("1", "t-1"), ("2", "t-2")])
        #expect(LocalSendUploadSession.decode(session.encoded()) == session)
    }

    @Test func aMessageIsOneTextFileWithItsTextInThePreview() throws {
        func request(_ files: String) -> LocalSendUploadRequest? {
            LocalSendUploadRequest.decode(Array(#"{"info":{"alias":"P","fingerprint":"f"},"files":{\#(files)}}"#.utf8))
        }
        let note = try #require(
            request(#""a":{"id":"a","fileName":"a.txt","size":5,"fileType":"text/plain","preview":"hello"}"#))
        #expect(note.message == "hello")
        let version1 = try #require(
            request(#""a":{"id":"a","fileName":"a.txt","size":5,"fileType":"text","preview":"hi"}"#))
        #expect(version1.message == "hi", "protocol 1 names the type text")
        let photo = try #require(
            request(#""a":{"id":"a","fileName":"a.jpg","size":5,"fileType":"image/jpeg","sha256":"\#(Self.digest)"}"#))
        #expect(photo.message == nil && photo.files.first?.sha256 == Self.digest.lowercased())
        let two = try #require(
            request(
                #""a":{"id":"a","fileName":"a.txt","size":1,"fileType":"text/plain","preview":"x"},"#
                    + #""b":{"id":"b","fileName":"b.txt","size":1,"fileType":"text/plain","preview":"y"}"#))
        #expect(two.message == nil && two.files.map(\.id) == ["a", "b"], "two texts are files, in the order written")
        let badDigest = try #require(
            request(#""a":{"id":"a","fileName":"a","size":1,"fileType":"x/y","sha256":"not hex"}"#))
        #expect(badDigest.files.first?.sha256 == nil)
    }

    private static let digest = String(repeating: "0123456789ABCDEF", count: 4)

    @Test func anOfferPastItsBoundsIsRefusedWhole() {
        func file(_ id: Int, size: String = "1", preview: String? = nil) -> String {
            #""\#(id)":{"id":"\#(id)","fileName":"f","size":\#(size),"fileType":"x/y""#
                + (preview.map { #","preview":"\#($0)""# } ?? "") + "}"
        }
        func decode(_ files: [String]) -> LocalSendUploadRequest? {
            LocalSendUploadRequest.decode(
                Array(#"{"info":{"alias":"P","fingerprint":"f"},"files":{\#(files.joined(separator: ","))}}"#.utf8))
        }
        #expect(decode((0..<LocalSendUploadRequest.maximumFiles).map { file($0) })?.files.count == 1_000)
        #expect(decode((0...LocalSendUploadRequest.maximumFiles).map { file($0) }) == nil, "one file too many")
        #expect(decode([]) == nil, "no files")
        #expect(decode([file(1), file(1)]) == nil, "one id twice")
        #expect(decode([file(1, size: "-1")]) == nil && decode([file(1, size: "1.5")]) == nil)
        let longest = String(repeating: "x", count: LocalSendFile.maximumPreviewBytes)
        #expect(decode([file(1, preview: longest)]) != nil)
        #expect(decode([file(1, preview: longest + "x")]) == nil, "a longer message is refused, never cut")
    }

    @Test func aMessageBecomesAHexWithEachWebAddressInItALinkOnce() {
        let text =
            "Look: https://example.com/a?b=1, (https://example.org/x) \"http://h.example\" ftp://no "
            + "https://example.com/a again, and mailto:no@example.com or https:// alone."
        #expect(
            ForeignMessage.links(in: text) == [
                "https://example.com/a?b=1", "https://example.org/x", "http://h.example", "https://example.com/a",
            ])
        let hex = ForeignMessage.localSend.hex(text, from: "Pixel", senderID: nil)
        #expect(hex.hexDescription == text && hex.senderName == "Pixel" && hex.senderUUID == nil)
        #expect(hex.links?.first?.linkDescription == "example.com" && hex.hexColor == ForeignMessage.localSend.color)
        let many = (0..<100).map { "https://example.com/\($0)" }.joined(separator: " ")
        #expect(ForeignMessage.links(in: many).count == ForeignMessage.maximumLinks)
        #expect(ForeignMessage.links(in: "https://" + String(repeating: "a", count: 9_000) + ".example").isEmpty)
    }

    @Test func aHexIsSentAsTheBareAddressOnlyWhenNothingElseWouldBeLost() {
        func hex(_ description: String?, _ urls: [String]) -> HexJM {
            HexJM(hexDescription: description, links: urls.map { LinkJM(url: $0) })
        }
        #expect(ForeignMessage.text(of: hex(nil, ["https://example.com/a"])) == "https://example.com/a")
        #expect(ForeignMessage.text(of: hex("  \n", ["https://example.com/a"])) == "https://example.com/a")
        #expect(
            ForeignMessage.text(of: hex("Dinner", ["https://example.com/a"])) == "Dinner\nhttps://example.com/a",
            "a description is kept, even at the cost of the app's Open")
        #expect(
            ForeignMessage.text(of: hex(" Two ", ["https://a.example", "", "https://b.example"]))
                == "Two\nhttps://a.example\nhttps://b.example")
        #expect(ForeignMessage.text(of: hex("Just a note", [])) == "Just a note")
        #expect(ForeignMessage.text(of: hex(nil, [])) == nil && ForeignMessage.text(of: hex("", [""])) == nil)
        // And back: what hexd sends becomes, at another hexd, the same links.
        let sent = hex("Two", ["https://a.example/x", "https://b.example/y"])
        let text = ForeignMessage.text(of: sent) ?? ""
        #expect(
            ForeignMessage.localSend.hex(text, from: "x", senderID: nil).links?.map(\.url) == sent.links?.map(\.url))
    }

    @Test func filesBecomeAHexOfLinksToWhereTheyLanded() {
        let one = ForeignMessage.localSend.hex(
            files: [("a b#1.jpg", "/home/u/Downloads/a b#1.jpg")], from: "Pixel", senderID: nil)
        #expect(one.hexDescription == "a b#1.jpg" && one.senderName == "Pixel")
        #expect(one.links?.first?.url == "file:///home/u/Downloads/a%20b%231.jpg")
        #expect(one.links?.first.map { LinkURL.parse($0.url ?? "")?.path } == "/home/u/Downloads/a b#1.jpg")
        #expect(one.links?.first?.service == ForeignMessage.fileService)
        let seven = ForeignMessage.localSend.hex(
            files: (1...7).map { ("f\($0)", "/d/f\($0)") }, from: "Mac", senderID: nil)
        #expect(seven.hexDescription == "7 files: f1, f2, f3, f4, f5 and 2 more" && seven.links?.count == 7)
        #expect(LinkURL.file(path: "/tmp/é?") == "file:///tmp/%C3%A9%3F")
    }

    /// A lone text file (a note a command-line sender sent as a file) stays a file; its first
    /// line that is not blank describes the hex, and its addresses are links after the file's.
    @Test func aTextFileLendsItsFirstLineAndAddresses() {
        let note = ForeignMessage.localSend.hex(
            files: [("notes.txt", "/d/notes.txt")], from: "cli", senderID: nil,
            text: "\n  buy milk \nsee https://example.com/a and https://example.com/a\n")
        #expect(note.hexDescription == "buy milk")
        #expect(note.links?.map(\.url) == ["file:///d/notes.txt", "https://example.com/a"])
        #expect(note.links?.first?.service == ForeignMessage.fileService)
        let long = ForeignMessage.localSend.hex(
            files: [("l.txt", "/d/l.txt")], from: "cli", senderID: nil, text: String(repeating: "é", count: 400))
        #expect(long.hexDescription?.utf8.count == ForeignMessage.maximumDescribingLineBytes)
        let blank = ForeignMessage.localSend.hex(
            files: [("b.txt", "/d/b.txt")], from: "cli", senderID: nil, text: " \n")
        #expect(blank.hexDescription == "b.txt" && blank.links?.count == 1)
        let many = (1...70).map { "https://example.com/\($0)" }.joined(separator: " ")
        let crowded = ForeignMessage.localSend.hex(files: [("m.txt", "/d/m.txt")], from: "c", senderID: nil, text: many)
        #expect(crowded.links?.count == ForeignMessage.maximumLinks)
        // More files than links one message becomes (an offer may name a thousand): no text link.
        let files = (0...ForeignMessage.maximumLinks).map { ("f\($0)", "/d/f\($0)") }
        let many65 = ForeignMessage.localSend.hex(files: files, from: "c", senderID: nil, text: "x https://a.example")
        #expect(many65.links?.count == files.count && many65.hexDescription == "x https://a.example")
    }

    @Test(arguments: [
        (204, LocalSendAnswer.shown, false), (200, .uploadWanted, false), (403, .declined, false),
        (401, .pinRequired, false), (409, .busy, true), (429, .busy, true), (404, .unexpected(404), false),
        (500, .unexpected(500), true), (302, .unexpected(302), true),
    ])
    func aReceiversAnswerSaysWhetherToTryAgain(status: Int, answer: LocalSendAnswer, retry: Bool) {
        #expect(LocalSendAnswer(status: status) == answer && answer.isWorthRetrying == retry)
    }

    @Test func aLocalSendIDIsItsFingerprintMarkedAndNothingElse() {
        PeerIDForms.register(LocalSendID.forms)
        let fingerprint = String(repeating: "ab", count: 32)
        let id = LocalSendID.certified.id(fingerprint)
        #expect(id == "localsend:" + fingerprint.uppercased())
        #expect(id?.isKeyDerivedID == true && id?.canonicalPeerID == id)
        #expect(("LocalSend:" + fingerprint).canonicalPeerID == id, "any case reads as the one spelling")
        #expect("localsend:abc".canonicalPeerID == nil && LocalSendID.certified.id("xyz") == nil)
        #expect("6f9619ff-8b86-4011-b42d-00c04fc964ff".canonicalPeerID == "6F9619FF-8B86-4011-B42D-00C04FC964FF")
    }

    @Test func aPlainHTTPDevicesIDIsItsOwnKindAndProvesNothing() {
        PeerIDForms.register(LocalSendID.forms)
        let id = LocalSendID.plain.id("3f2a-b_9")
        #expect(id == "localsend-http:3F2A-B_9")
        #expect(id?.isLocalSendHTTPID == true && id?.canonicalPeerID == id)
        #expect(!LocalSendID.certified.owns(id ?? "") && id?.isKeyDerivedID == false, "nothing proves it")
        #expect(id?.canonicalSenderID == nil, "no hex names it as its sender")
        let hexLike = LocalSendID.plain.id(String(repeating: "ab", count: 32))
        #expect(
            !LocalSendID.certified.owns(hexLike ?? ""),
            "a fingerprint of 64 hex digits over HTTP is still no certificate's")
        #expect(("LocalSend-HTTP:3f2a-b_9").canonicalPeerID == id, "any case reads as the one spelling")
        for refused in ["", String(repeating: "a", count: 65), "a b", "a/../b", "ä", "a\u{0}"] {
            #expect(LocalSendID.plain.id(refused) == nil, "\(refused.debugDescription)")
        }
    }

    @Test func listsShowALocalSendIDShortAndInItsSpelling() {
        PeerIDForms.register(LocalSendID.forms)
        #expect(("localsend:" + String(repeating: "0f", count: 32)).shortPeerID == "localsend:0F0F0F0F")
        #expect("localsend-http:ab".shortPeerID == "localsend-http:AB")
        #expect("localsend:12".shortPeerID == nil, "its prefix is a registered form's, which 12 is not")
    }

    /// Mutations of valid texts and random bytes: every reader answers, none traps. Bounded in count.
    @Test func noTextTrapsAReader() {
        var generator = SystemRandomNumberGenerator()
        let seeds = [
            Self.announcement,
            LocalSendUploadRequest(
                info: LocalSendDevice(
                    alias: "a", version: "2.1", deviceModel: nil, deviceType: .server, fingerprint: "f"),
                files: [LocalSendFile(id: "1", fileName: "n", size: 1, fileType: "text/plain", preview: "p")]
            ).encoded(),
            LocalSendUploadSession(sessionID: "s", tokens: [("1", "t")]).encoded(),
        ]
        var read = 0
        for round in 0..<3_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...8, using: &generator) where !bytes.isEmpty {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: index)
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                }
            }
            if LocalSendDevice.decode(bytes) != nil { read += 1 }
            if LocalSendUploadRequest.decode(bytes) != nil { read += 1 }
            if LocalSendUploadSession.decode(bytes) != nil { read += 1 }
        }
        #expect(read > 0, "some mutations stay readable, so the readers' paths past parsing ran too")
    }
}
