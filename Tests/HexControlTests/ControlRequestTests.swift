import HexControl
import HexKit
import Testing

/// The wire form of control requests: every command survives a round trip, and an incomplete or
/// out-of-range request is refused while it is decoded, naming the argument.
@Suite(.timeLimit(.minutes(5))) struct ControlRequestTests {
    static let peer = SendOptions(to: "grace", wait: false, timeout: .seconds(7), legacy: true)
    static let draft = HexDraft(
        description: "Q3", color: "#112233",
        links: [LinkJM(url: "https://a.example/1", linkDescription: "one", service: .dropbox)])
    static let requests: [ControlRequest] = [
        .status, .refreshPeers, .peers(ListPage()), .peers(ListPage(limit: 5, after: UUID())), .send(draft, peer),
        .send(draft, SendOptions(to: "10.0.0.2:18521")),
        .alert(message: "hello", peer), .watch(since: 42), .inboxList(ListPage(limit: 1)),
        .inboxShow(id: "9B2F", full: true),
        .inboxShow(id: "9B2F", full: false), .inboxCheck(id: "a"), .inboxDelete(id: "b"), .inboxSave(id: "c"),
        .hexlistList(ListPage()),
        .hexlistAdd(draft), .hexlistRemove(id: "d"), .hexlistMove(id: "e", index: 3), .hexlistSend(id: "f", peer),
        .block(sender: "ada"), .unblock(sender: "ada"), .blocked, .queries, .cancel(query: "1A2B"),
        .share(
            ShareRequest(
                files: ["/a", "/b"], provider: "url", query: UUID(), gatherTimeout: .seconds(9), description: "d",
                color: "#ABCDEF",
                destination: .peer(peer))),
        .share(ShareRequest(files: ["/a"], destination: .myHexlist)),
        .pair(peer: "grace", accept: false, timeout: nil), .pair(peer: "6F96", accept: true, timeout: .seconds(3)),
        .unpair(peer: "grace"), .declinePairing(peer: "grace"),
        .resetTrust(peer: "6F9619FF-8B86-4011-B42D-00C04FC964FF"),
        .send(draft, SendOptions(to: "grace", queue: false, messageID: UUID())),
        .outboxList(ListPage(limit: 2, after: UUID())),
        .outboxRetry(id: "6F96", timeout: .seconds(2)), .outboxRetry(id: "6F96", timeout: nil),
        .outboxCancel(id: "6F9619FF"),
        .alertsList(ListPage(limit: 3, after: UUID())), .alertsDelete(id: "0B5C"),
        .visibility(nil), .visibility(.visible), .visibility(.hidden), .visibility(.visibleFor(.seconds(600))),
        .fetch(FetchRequest(hex: "0B5C")), .fetch(FetchRequest(hex: "0B5C", numbers: [1, 3], downloads: "/srv/in")),
        .grants, .revoke(id: "b2e0"),
    ]

    @Test func everyCommandSurvivesARoundTrip() throws {
        #expect(Set(Self.requests.map(\.command)) == Set(ControlCommand.allCases), "every command is covered")
        for request in Self.requests {
            let line = try ControlCoding.encode(request)
            #expect(
                try ControlCoding.decode(ControlRequest.self, from: line) == request,
                "\(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test func aShareKeepsItsGatherAndSendTimeoutsApart() throws {
        let line = #"{"command":"share","files":["/a"],"to":"grace","timeout":60,"sendTimeout":2}"#
        guard case .share(let share) = try ControlCoding.decode(ControlRequest.self, from: Array(line.utf8)) else {
            Issue.record("not a share")
            return
        }
        #expect(share.gatherTimeout == .seconds(60))
        #expect(share.destination == .peer(SendOptions(to: "grace", timeout: .seconds(2))))
    }

    /// Each request lacks or breaks one argument; the decoding error names it.
    @Test func incompleteOrOutOfRangeRequestsAreRefusedNamingTheArgument() {
        let refused: [(String, String)] = [
            (#"{"command":"inbox.show"}"#, "id"),
            (#"{"command":"inbox.show","id":""}"#, "id"),
            (#"{"command":"send","to":"x","links":[]}"#, "links"),
            (#"{"command":"send","links":[{"url":"u"}]}"#, "to"),
            (#"{"command":"send","to":"x","links":[{"url":"u"}],"timeout":0}"#, "timeout"),
            (#"{"command":"alert","to":"x"}"#, "message"),
            (#"{"command":"hexlist.move","id":"a","index":-1}"#, "index"),
            (#"{"command":"inbox.list","limit":0}"#, "limit"),
            (#"{"command":"peers","after":"not-a-uuid"}"#, "after"),
            (#"{"command":"share","files":[],"save":true}"#, "files"),
            (#"{"command":"share","files":["/a"]}"#, "to"),
            (#"{"command":"share","files":["/a"],"save":true,"to":"x"}"#, "to"),
            (#"{"command":"share","files":["/a"],"save":true,"query":"q"}"#, "query"),
            (#"{"command":"block"}"#, "uuid"),
            (#"{"command":"cancel","query":""}"#, "query"),
            (#"{"command":"pair"}"#, "peer"),
            (#"{"command":"pair","peer":"x","timeout":-1}"#, "timeout"),
            (#"{"command":"trust.reset","peer":""}"#, "peer"),
            (#"{"command":"pair.decline"}"#, "peer"),
            (#"{"command":"visibility","visibility":"invisible"}"#, "visibility"),
            (#"{"command":"visibility","visibility":"hidden","seconds":60}"#, "seconds"),
            (#"{"command":"visibility","seconds":60}"#, "seconds"),
            (#"{"command":"visibility","visibility":"visible","seconds":86401}"#, "seconds"),
            (#"{"command":"fetch"}"#, "id"),
            (#"{"command":"fetch","id":"a","numbers":[0]}"#, "numbers"),
            (#"{"command":"fetch","id":"a","numbers":"1"}"#, "numbers"),
            (#"{"command":"fetch","id":"a","downloads":"relative/dir"}"#, "downloads"),
            (#"{"command":"revoke","id":""}"#, "id"),
            (#"{"command":"frobnicate"}"#, "command"),
        ]
        for (line, key) in refused {
            #expect {
                try ControlCoding.decode(ControlRequest.self, from: Array(line.utf8))
            } throws: { error in
                Self.key(of: error) == key
            }
        }
    }

    @Test func keysACommandDoesNotTakeAreIgnored() throws {
        let line = #"{"command":"status","id":"x","links":"not even links","future":{"nested":[1]}}"#
        #expect(try ControlCoding.decode(ControlRequest.self, from: Array(line.utf8)) == .status)
    }

    private static func key(of error: any Error) -> String? {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: key.stringValue
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            context.codingPath.last?.stringValue
        default: nil
        }
    }
}
