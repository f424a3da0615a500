import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ReceiverTableTests {
    let start = ContinuousClock.now
    let info = EndpointInfo(deviceType: .phone, name: "Pixel 8", random: [])

    @Test func aReceiverStaysWhileHeardAndGoesWhenSilentOrSayingGoodbye() {
        var table = ReceiverTable<String>()
        #expect(table.nextExpiry == nil, "nothing to expire: no timer")
        table.heard("AB12", info: info, at: "10.0.0.2", port: 4000, interval: .seconds(40), now: start)
        #expect(table.nextExpiry == start + .seconds(120))
        #expect(table.receivers["AB12"]?.port == 4000 && table.receivers["AB12"]?.label == "Pixel 8")
        let early = table.expire(at: start + .seconds(119))
        #expect(early.isEmpty)
        let late = table.expire(at: start + .seconds(120))
        #expect(late.map(\.endpointID) == ["AB12"])
        table.heard("AB12", info: info, at: "10.0.0.2", port: 4000, interval: .seconds(1), now: start)
        let soon = table.expire(at: start + .seconds(29))
        #expect(soon.isEmpty, "heard at least 30 s")
        table.left("AB12")
        #expect(table.receivers.isEmpty)
    }

    @Test func theTableIsBoundedAndAReceiverWithoutANameIsCalledByItsID() {
        var table = ReceiverTable<String>(capacity: 2)
        let first = table.heard("AAAA", info: info, at: "a", port: 1, interval: .seconds(10), now: start)
        let second = table.heard("BBBB", info: info, at: "b", port: 1, interval: .seconds(10), now: start)
        #expect(first && second)
        let third = table.heard("CCCC", info: info, at: "c", port: 1, interval: .seconds(10), now: start)
        #expect(!third, "past the capacity, a newcomer is not listed")
        let again = table.heard("AAAA", info: info, at: "a2", port: 2, interval: .seconds(10), now: start)
        #expect(again, "one listed is heard again")
        let unnamed = EndpointInfo(deviceType: .phone, name: nil, random: [])
        table.left("BBBB")
        table.heard("CCCC", info: unnamed, at: "c", port: 1, interval: .seconds(10), now: start)
        #expect(table.receivers["CCCC"]?.label == "Quick Share device CCCC")
    }
}
