import HexJSON
import HexKit
import KDEConnectCore
import Testing

/// KDE Connect's packets as hexd reads and writes them: what the apps send is read, the rules
/// the current apps enforce on an identity hold, what hexd writes reads back the same, and no
/// line a stranger sends traps or passes a bound.
@Suite(.timeLimit(.minutes(1))) struct KDEConnectWireTests {
    /// An identity as kdeconnectd 22.12 broadcasts it (captured; capabilities shortened): the body
    /// first, `id` a string, the device ID a UUID with `_` for `-` and around it.
    private static let broadcast = Array(
        #"""
        {"body":{"deviceId":"_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_","deviceName":"kde-b","deviceType":"desktop",\#
        "incomingCapabilities":["kdeconnect.ping","kdeconnect.share.request"],\#
        "outgoingCapabilities":["kdeconnect.ping","kdeconnect.share.request","kdeconnect.share.request.update"],\#
        "protocolVersion":7,"tcpPort":1716},"id":"1795737687735","type":"kdeconnect.identity"}
        """#.utf8)

    private static func identity(_ text: String, broadcast: Bool = true) throws -> KDEConnectIdentity {
        try KDEConnectIdentity(try KDEConnectPacket.decode(Array(text.utf8)), broadcast: broadcast)
    }

    @Test func aKDEConnectIDIsItsDeviceIDMarkedInOneSpelling() {
        PeerIDForms.register([KDEConnectID.form])
        let current = String(repeating: "a1", count: 16)
        let id = KDEConnectID.of(deviceID: current)
        #expect(id == "kdeconnect:" + current)
        #expect(id?.isKDEConnectID == true && id?.isKeyDerivedID == true && id?.canonicalPeerID == id)
        #expect(id?.kdeConnectDeviceID == current && PeerIDForms.form(of: id ?? "")?.kind == .kdeconnect)
        #expect(("KDEConnect:" + current.uppercased()).canonicalPeerID == id, "any case reads as the one spelling")
        // 22.12's own IDs: a UUID between underscores.
        let older = "_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_"
        #expect(KDEConnectID.of(deviceID: older) == "kdeconnect:" + older)
        for refused in ["", "short", String(repeating: "a", count: 39), "a1b2c3d4/e5f6a7b8c9d0e1f2a3b4c5d6e7f"] {
            #expect(KDEConnectID.of(deviceID: refused) == nil, "\(refused)")
            #expect(("kdeconnect:" + refused).canonicalPeerID == nil, "\(refused)")
        }
        #expect(("kdeconnect:" + current.uppercased()).isKDEConnectID == false, "an ID in another spelling")
    }

    @Test func listsShowAKDEConnectIDShortAndInItsSpelling() {
        PeerIDForms.register([KDEConnectID.form])
        #expect(("KDEConnect:" + String(repeating: "A1", count: 16)).shortPeerID == "kdeconnect:a1a1a1a1")
        #expect(("kdeconnect:" + String(repeating: "b2", count: 16)).shortPeerID == "kdeconnect:b2b2b2b2")
    }

    @Test func anIdentityOfTheAppsIsRead() throws {
        let identity = try KDEConnectIdentity(try KDEConnectPacket.decode(Self.broadcast), broadcast: true)
        #expect(identity.deviceID == "_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_" && identity.name == "kde-b")
        #expect(identity.deviceType == .desktop && identity.protocolVersion == 7 && identity.tcpPort == 1_716)
        #expect(identity.takes("kdeconnect.share.request") && !identity.takes("kdeconnect.sftp"))
        #expect(identity.outgoingCapabilities.count == 3 && identity.targetDeviceID == nil)
    }

    @Test func whatHexdWritesReadsBackTheSame() throws {
        let identity = KDEConnectIdentity(
            deviceID: "0123456789abcdef0123456789abcdef", name: "hexd (laptop)", deviceType: .laptop,
            protocolVersion: 8, incomingCapabilities: ["kdeconnect.share.request"],
            outgoingCapabilities: ["kdeconnect.share.request"], tcpPort: 1_730,
            targetDeviceID: "_4b0b6a0e_9c44_4f5e_8a51_d0c5f2c3e7aa_", targetProtocolVersion: 7)
        #expect(identity.name == "hexd laptop", "the characters the apps forbid are left out")
        let line = identity.encoded(id: 42)
        #expect(line.last == UInt8(ascii: "\n") && line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") })
        let read = try KDEConnectIdentity(try KDEConnectPacket.decode(line.dropLast()), broadcast: true)
        #expect(read == identity)
    }

    /// A phone or tablet that takes pings is sent one with a text share's text, so it shows as a
    /// notification and not only on the clipboard; a desktop, a device without the ping plugin, or
    /// a lone URL gets none.
    @Test(arguments: [
        (
            KDEConnectIdentity.DeviceType.phone, ["kdeconnect.ping"], [KDEConnectShare.text("Dinner at 8")],
            String?("Dinner at 8")
        ),
        (.tablet, ["kdeconnect.ping"], [.text("a"), .url("https://example.com"), .text("b")], "a\nb"),
        (.phone, ["kdeconnect.ping"], [.url("https://example.com")], nil),
        (.phone, ["kdeconnect.share.request"], [.text("no ping plugin")], nil),
        (.desktop, ["kdeconnect.ping"], [.text("a desktop shows it")], nil),
    ])
    func aTextToAPhoneIsAlsoAPing(
        type: KDEConnectIdentity.DeviceType, takes: [String], shares: [KDEConnectShare], message: String?
    ) {
        let device = KDEConnectIdentity(
            deviceID: "0123456789abcdef0123456789abcdef", name: "Pixel", deviceType: type, protocolVersion: 8,
            incomingCapabilities: takes, outgoingCapabilities: [])
        #expect(KDEConnectPing.notifying(shares, on: device)?.message == message)
    }

    @Test(arguments: [
        ("short", "0123456789abcdef0123456789abcde"),
        ("long", String(repeating: "a", count: 39)),
        ("dots", "0123456789abcdef.0123456789abcdef"),
        ("space", "0123456789abcdef 0123456789abcdef"),
    ])
    func aDeviceIDOutsideTheAppsRuleIsRefused(_ label: String, _ deviceID: String) {
        let text =
            #"{"id":1,"type":"kdeconnect.identity","body":{"deviceId":"\#(deviceID)","deviceName":"x","#
            + #""protocolVersion":7,"tcpPort":1716}}"#
        #expect(throws: KDEConnectIdentity.Refusal.badDeviceID, "\(label)") { try Self.identity(text) }
    }

    @Test func theNameVersionAndPortRulesHold() throws {
        func text(name: String = "phone", version: String = "7", port: String = "1716") -> String {
            #"{"id":1,"type":"kdeconnect.identity","body":{"deviceId":"0123456789abcdef0123456789abcdef","#
                + #""deviceName":"\#(name)","protocolVersion":\#(version),"tcpPort":\#(port)}}"#
        }
        #expect(throws: KDEConnectIdentity.Refusal.badName) { try Self.identity(text(name: "...!?")) }
        #expect(throws: KDEConnectIdentity.Refusal.badName) { try Self.identity(text(name: " \\u0007 ")) }
        #expect(try Self.identity(text(name: String(repeating: "é", count: 40))).name.count == 32)
        let marks = "ab" + String(repeating: "\u{0301}", count: 2_000)
        #expect(try Self.identity(text(name: marks)).name == "a", "a character of 4 KB is past the byte cap")
        #expect(try Self.identity(text(name: "evil\u{202E}gnp.exe")).name == "evilgnpexe", "no format characters")
        #expect(throws: KDEConnectIdentity.Refusal.unsupportedVersion(6)) { try Self.identity(text(version: "6")) }
        #expect(throws: KDEConnectIdentity.Refusal.unsupportedVersion(nil)) {
            try Self.identity(text(version: "\"8\""))
        }
        #expect(try Self.identity(text(version: "9")).protocolVersion == 9, "a later version is taken")
        for port in ["1715", "1765", "0", "70000", "null"] {
            #expect(throws: KDEConnectIdentity.Refusal.badPort, "\(port)") { try Self.identity(text(port: port)) }
        }
        #expect(try Self.identity(text(port: "null"), broadcast: false).tcpPort == nil, "a TCP identity needs none")
        #expect(throws: KDEConnectIdentity.Refusal.notAnIdentity("kdeconnect.ping")) {
            try KDEConnectIdentity(KDEConnectPacket(type: "kdeconnect.ping"), broadcast: false)
        }
    }

    @Test func theVersionSpokenIsTheLowerOfBothAtMostEight() throws {
        let seven = try KDEConnectIdentity(try KDEConnectPacket.decode(Self.broadcast), broadcast: true)
        var later = seven
        later.protocolVersion = 9
        var eight = seven
        eight.protocolVersion = 8
        #expect(seven.versionSpoken(with: later) == 7 && later.versionSpoken(with: later) == 8)
        #expect(eight.versionSpoken(with: later) == 8)
    }

    @Test(arguments: [
        "", "{", "[]", #"{"type":"kdeconnect.ping"}"#, #"{"type":"other.ping","body":{}}"#,
        #"{"type":7,"body":{}}"#, #"{"type":"kdeconnect.ping","body":[]}"#,
        #"{"type":"kdeconnect.ping","body":{"a":[[[[[[[[1]]]]]]]]}}"#,
    ])
    func aLineThatIsNoPacketIsRefused(_ text: String) {
        #expect(throws: KDEConnectPacket.Refusal.self) { try KDEConnectPacket.decode(Array(text.utf8)) }
    }

    @Test func aLinePastTheCapIsRefusedUnread() {
        let long =
            Array(#"{"type":"kdeconnect.identity","body":{"deviceName":""#.utf8)
            + [UInt8](repeating: UInt8(ascii: "a"), count: 9_000) + Array(#""}}"#.utf8)
        #expect(throws: KDEConnectPacket.Refusal.tooLong(long.count)) {
            try KDEConnectPacket.decode(long, maximumSize: KDEConnectPacket.maximumIdentitySize)
        }
    }

    @Test func sharesAreReadAndWritten() throws {
        let url = try KDEConnectShare(
            KDEConnectPacket.decode(
                Array(#"{"id":1,"type":"kdeconnect.share.request","body":{"url":"https://example.com/a?b=c"}}"#.utf8)))
        #expect(url == .url("https://example.com/a?b=c"))
        let file = KDEConnectShare.file(
            KDEConnectSharedFile(name: "photo.jpg", size: 1_234, port: 1_739, numberOfFiles: 2, totalSize: 5_000))
        for share in [url, .text("see https://example.org\nand more"), file] {
            #expect(try KDEConnectShare(KDEConnectPacket.decode(share.encoded(id: 7).dropLast())) == share)
        }
        let noPort = Array(#"{"id":1,"type":"kdeconnect.share.request","body":{"filename":"a"},"payloadSize":5}"#.utf8)
        #expect(throws: KDEConnectShare.Refusal.noPayload) { try KDEConnectShare(KDEConnectPacket.decode(noPort)) }
        let empty = Array(#"{"id":1,"type":"kdeconnect.share.request","body":{"filename":"e"}}"#.utf8)
        #expect(
            try KDEConnectShare(KDEConnectPacket.decode(empty))
                == .file(KDEConnectSharedFile(name: "e", size: 0, port: nil)))
        let both = Array(#"{"id":1,"type":"kdeconnect.share.request","body":{"url":"https://a","text":"t"}}"#.utf8)
        #expect(try KDEConnectShare(KDEConnectPacket.decode(both)) == .text("t"), "the apps' order: text before URL")
        let nothing = Array(#"{"id":1,"type":"kdeconnect.share.request","body":{}}"#.utf8)
        #expect(throws: KDEConnectShare.Refusal.empty) { try KDEConnectShare(KDEConnectPacket.decode(nothing)) }
        let longURL = KDEConnectShare.url("https://example.com/" + String(repeating: "a", count: 8_200))
        #expect(throws: KDEConnectShare.Refusal.urlTooLong) {
            try KDEConnectShare(KDEConnectPacket.decode(longURL.encoded(id: 1).dropLast()))
        }
    }

    @Test func pairPacketsAreReadAndWritten() throws {
        for pair in [KDEConnectPair(pair: true, timestamp: 1_764_198_000), KDEConnectPair(pair: false)] {
            #expect(KDEConnectPair(try KDEConnectPacket.decode(pair.encoded(id: 3).dropLast())) == pair)
        }
        #expect(KDEConnectPair(KDEConnectPacket(type: "kdeconnect.pair")) == nil, "no pair member")
    }

    private func hex(_ description: String?, _ urls: [String]) -> HexJM {
        HexJM(senderName: "me", hexDescription: description, links: urls.map { LinkJM(url: $0) })
    }

    @Test func aHexIsSentAsTheSharesThePersonExpects() {
        #expect(KDEConnectShare.shares(of: hex(nil, ["https://example.com/a"])) == [.url("https://example.com/a")])
        #expect(
            KDEConnectShare.shares(of: hex("Dinner", ["https://example.com/a"]))
                == [.text("Dinner\nhttps://example.com/a")], "a description is never dropped")
        #expect(
            KDEConnectShare.shares(of: hex(nil, ["https://a.example", "https://b.example"]))
                == [.text("https://a.example\nhttps://b.example")])
        #expect(
            KDEConnectShare.shares(of: hex("Two", ["https://a.example", "https://b.example"]), eachLink: true)
                == [.text("Two"), .url("https://a.example"), .url("https://b.example")])
        #expect(KDEConnectShare.shares(of: hex(nil, [])).isEmpty && KDEConnectShare.shares(of: hex(" ", [])).isEmpty)
    }

    @Test func aSharedURLOrTextBecomesAHex() throws {
        let id = "_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_"
        let url = try #require(KDEConnectShare.url("https://example.com/x").hex(from: "Phone", senderID: id))
        #expect(url.links?.map(\.url) == ["https://example.com/x"] && url.hexDescription == nil)
        #expect(url.senderName == "Phone" && url.senderUUID == id && url.hexColor == ForeignMessage.kdeConnect.color)
        let text = try #require(
            KDEConnectShare.text("Read (https://example.org/a), then https://example.org/b.").hex(
                from: "P", senderID: id))
        #expect(text.hexDescription == "Read (https://example.org/a), then https://example.org/b.")
        #expect(text.links?.map(\.url) == ["https://example.org/a", "https://example.org/b"])
        let odd = try #require(KDEConnectShare.url("not a link").hex(from: "P", senderID: id))
        #expect(odd.hexDescription == "not a link" && (odd.links ?? []).isEmpty, "kept as text")
        #expect(
            KDEConnectShare.file(KDEConnectSharedFile(name: "a", size: 0, port: nil)).hex(from: "P", senderID: id)
                == nil)
    }
}
