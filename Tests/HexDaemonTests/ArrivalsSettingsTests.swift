import HexCarrier
import HexCommandLine
import HexKit
import HexNet
import Testing

@testable import HexDaemon

@Suite(.timeLimit(.minutes(5))) struct ArrivalsSettingsTests {
    private func resolve(_ arguments: [String], environment: [String: String] = [:]) throws -> DaemonConfiguration {
        guard
            case .run(let configuration) = try DaemonConfiguration.resolve(
                arguments: arguments, environment: environment, readFile: { _ in nil })
        else { throw UsageError("not a run") }
        return configuration
    }

    @Test func thePageIsOnLoopbackOrOff() throws {
        #expect(try resolve([]).web.address == WebSettings.Address(host: .loopback, port: 18_522))
        #expect(try resolve(["--web", "off"]).web.address == nil)
        #expect(try resolve([], environment: ["HEXD_WEB": "localhost:0"]).web.address?.port == 0)
        #expect(try resolve(["--web", "127.0.0.2:9000"]).web.address?.description == "127.0.0.2:9000")
        for refused in ["0.0.0.0:18522", "192.168.1.20:80", "[::1]:80", "127.0.0.1", "127.0.0.1:70000", "on"] {
            #expect(throws: UsageError.self, "\(refused)") { try resolve(["--web", refused]) }
        }
    }

    @Test func notificationsAreOnOffOrLeftToTheEnvironment() throws {
        #expect(try resolve([]).notify.enabled == nil)
        #expect(try resolve(["--notify", "off"]).notify.enabled == false)
        #expect(try resolve([], environment: ["HEXD_NOTIFY": "on"]).notify.enabled == true)
        #expect(throws: UsageError.self) { try resolve(["--notify", "yes"]) }
    }
}

@Suite(.timeLimit(.minutes(5))) struct NotificationContentTests {
    private func hex(_ description: String, links: [String], name: String = "Grace", trust: SenderTrust? = .paired)
        -> Hex
    {
        Hex(
            id: UUID.random(), location: .inbox, senderUUID: "1B8D02B4-0000-8000-8000-000000000001",
            senderName: name, hexDescription: description, hexColor: "#fff",
            links: links.map { Link(url: $0, linkDescription: "", service: .unknown) }, timestamp: Date(),
            isChecked: false, senderTrust: trust)
    }

    @Test func aLoneHexWithOneLinkOpensItAndSaysWhoSentIt() {
        let content = NotificationContent.hexes(
            [hex("Trip", links: ["https://a.example/x"])], page: "file:///p",
            markup: false)
        #expect(content.summary == "Grace (1B8D02B4, paired) sent a hex")
        #expect(content.body == "Trip\nhttps://a.example/x")
        #expect(content.openTargets == ["https://a.example/x"])
        #expect(content.actions.map(\.key) == ["open", "inbox"])
    }

    @Test func severalLinksOrSeveralHexesOpenThePageAndAreListed() {
        let two = NotificationContent.hexes(
            [hex("Two", links: ["https://a.example", "https://b.example"])],
            page: "file:///p", markup: false)
        #expect(two.openTargets == ["file:///p#inbox"])
        let burst = NotificationContent.hexes(
            (0..<7).map { hex("H\($0)", links: ["https://a.example/\($0)"]) },
            page: nil, markup: false)
        #expect(burst.summary.hasSuffix("sent 7 hexes"))
        #expect(
            burst.body.split(separator: "\n")
                == ["… and 2 before", "• H2", "• H3", "• H4", "• H5", "• H6"])
        #expect(burst.openTargets.count == 5 && burst.actions.map(\.key) == ["open"], "no page: the links, no Inbox")
    }

    @Test func whatAPeerSentIsCleanedAndEscaped() {
        let hostile = hex(
            "<b>x</b> & \u{202E}gnp.exe\u{7}", links: ["javascript:alert(1)", "file:///etc/passwd"],
            name: "Ma\u{202E}llory\n")
        let content = NotificationContent.hexes([hostile], page: nil, markup: true)
        #expect(content.summary == "Mallory (1B8D02B4, paired) sent a hex")
        #expect(content.body.hasPrefix("&lt;b&gt;x&lt;/b&gt; &amp; gnp.exe\n"))
        #expect(content.openTargets.isEmpty && content.actions.isEmpty, "nothing a browser should open")
        #expect(NotificationContent.clean(String(repeating: "y", count: 500)).count == 200)
    }

    @Test func anOfferIsToldInItsCarriersWordsWithTheIDThatAcceptsIt() {
        let fingerprint = String(repeating: "AB", count: 32)
        let localSend = NotificationContent.offer(
            name: "Pixel", id: "localsend:" + fingerprint,
            offer: WaitingOffer("a file, 12 B", via: "LocalSend", acceptingPairs: true), page: nil, markup: false)
        #expect(
            localSend.body == "Wants to send a file, 12 B by LocalSend. It waits a minute for your yes, which lets it "
                + "send from now on: on the inbox page, or with hexctl pair --accept localsend:ABABABAB.")
        let quickShare = NotificationContent.offer(
            name: "Pixel", id: "quickshare-offer:12",
            offer: WaitingOffer(
                "a.jpg, 12 B (PIN 1234)", via: "Quick Share", check: "its screen shows the same PIN",
                acceptingPairs: false),
            page: nil, markup: false)
        #expect(
            quickShare.body == "Wants to send a.jpg, 12 B (PIN 1234) by Quick Share. Check that its screen shows the "
                + "same PIN. It waits a minute for your yes: on the inbox page, or with hexctl pair --accept "
                + "quickshare-offer:12.",
            "taking a Quick Share offer pins nothing, and its key is not a peer ID to shorten")
    }
}
