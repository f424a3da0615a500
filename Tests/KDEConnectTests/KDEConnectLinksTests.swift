import HexEngine
import HexKit
import KDEConnectCore
import Testing

/// When hexd dials a KDE Connect device, broadcasts, and takes a link: one link per device, no
/// crossed dials, the apps' caps, on a fake clock.
@Suite(.timeLimit(.minutes(1))) struct KDEConnectLinksTests {
    typealias Links = KDEConnectLinks<String>
    private let start = ContinuousClock.now
    private static let own = "0123456789abcdef0123456789abcdef"

    private func identity(_ index: Int) -> KDEConnectIdentity {
        KDEConnectIdentity(
            deviceID: "device\(index)" + String(repeating: "0", count: 26), name: "device \(index)",
            deviceType: .phone, protocolVersion: 7, incomingCapabilities: [KDEConnectShare.packetType],
            outgoingCapabilities: [KDEConnectShare.packetType], tcpPort: 1_716)
    }

    @Test func aDeviceHeardIsDialedAfterTheDelayOnce() {
        var links = Links(ownDeviceID: Self.own)
        let atStart1 = links.started(at: start)
        #expect(atStart1 == [.broadcast])
        let phone = identity(1)
        let heard1 = links.heard(phone, from: "10.0.0.2", at: start)
        #expect(heard1.isEmpty)
        #expect(links.deadline == start + Links.dialDelay)
        let due1 = links.tick(at: start + .milliseconds(499))
        #expect(due1.isEmpty)
        let due2 = links.tick(at: start + Links.dialDelay)
        #expect(due2 == [.dial(phone, at: "10.0.0.2")])
        let heard2 = links.heard(phone, from: "10.0.0.2", at: start + .seconds(2))
        #expect(heard2.isEmpty)
        let due3 = links.tick(at: start + .seconds(3))
        #expect(due3.isEmpty, "no second dial while one is under way")
        let taken1 = links.linkUp(phone.deviceID, paired: false, at: start + .seconds(3))
        #expect(taken1)
        let heard3 = links.heard(phone, from: "10.0.0.2", at: start + .seconds(5))
        #expect(heard3.isEmpty)
        let due4 = links.tick(at: start + .seconds(6))
        #expect(due4.isEmpty, "no dial while a link is up")
        links.linkDown(phone.deviceID)
        _ = links.heard(phone, from: "10.0.0.2", at: start + .seconds(7))
        let due5 = links.tick(at: start + .seconds(8))
        #expect(due5 == [.dial(phone, at: "10.0.0.2")], "gone, it is dialed again")
    }

    /// A device DNS-SD finds is sent hexd's identity (it then dials hexd), at most every
    /// `foundSpacing`, and not while it has a link; hexd's own instance is not.
    @Test func aDeviceFoundByDNSSDIsToldHexdsIdentity() {
        var links = Links(ownDeviceID: Self.own)
        let phone = identity(1)
        #expect(links.found(phone.deviceID, at: "10.0.0.2", now: start) == [.identity(to: "10.0.0.2")])
        #expect(links.found(phone.deviceID.uppercased(), at: "10.0.0.2", now: start + .seconds(5)).isEmpty)
        #expect(links.found(Self.own.uppercased(), at: "10.0.0.1", now: start).isEmpty, "hexd's own instance")
        let taken = links.linkUp(phone.deviceID, paired: false, at: start + .seconds(1))
        #expect(taken)
        #expect(links.found(phone.deviceID, at: "10.0.0.2", now: start + .seconds(40)).isEmpty, "it has a link")
        links.linkDown(phone.deviceID)
        let again = links.found(phone.deviceID, at: "10.0.0.3", now: start + .seconds(41))
        #expect(again == [.identity(to: "10.0.0.3")], "a link lost in silence: told again")
    }

    @Test func devicesFoundAreBounded() {
        var links = Links(ownDeviceID: Self.own)
        for index in 0..<(Links.capacity + 10) {
            let digits = String(index)
            _ = links.found(String(repeating: "0", count: 32 - digits.count) + digits, at: "10.0.0.2", now: start)
        }
        #expect(links.found("f" + String(repeating: "0", count: 31), at: "10.0.0.2", now: start).isEmpty, "full")
        let later = links.found("f" + String(repeating: "0", count: 31), at: "10.0.0.2", now: start + .seconds(31))
        #expect(later == [.identity(to: "10.0.0.2")], "those told a spacing ago make room")
    }

    @Test func aDeviceThatDialsHexdFirstIsNotDialedBack() {
        var links = Links(ownDeviceID: Self.own)
        _ = links.started(at: start)
        let phone = identity(1)
        _ = links.heard(phone, from: "10.0.0.2", at: start)
        let taken2 = links.linkUp(phone.deviceID, paired: true, at: start + .milliseconds(30))
        #expect(taken2)
        let due6 = links.tick(at: start + .seconds(1))
        #expect(due6.isEmpty, "its link came first: no crossed dial")
        #expect(links.deadline == nil)
    }

    @Test func hexdsOwnIdentityAndRepeatsWithinHalfASecondAreIgnored() {
        var links = Links(ownDeviceID: Self.own)
        var own = identity(1)
        own.deviceID = Self.own
        _ = links.heard(own, from: "10.0.0.1", at: start)
        #expect(links.deadline == nil)
        let phone = identity(2)
        _ = links.heard(phone, from: "10.0.0.2", at: start)
        _ = links.heard(phone, from: "10.0.0.66", at: start + .milliseconds(100))
        let due7 = links.tick(at: start + .seconds(1))
        #expect(due7 == [.dial(phone, at: "10.0.0.2")], "the repeat was dropped")
    }

    @Test func unpairedLinksAreCappedAndPairedOnesAreNot() {
        var links = Links(ownDeviceID: Self.own)
        for index in 0..<Links.maximumUnpairedLinks {
            let taken3 = links.linkUp(identity(index).deviceID, paired: false, at: start)
            #expect(taken3)
        }
        let taken4 = links.linkUp(identity(100).deviceID, paired: false, at: start)
        #expect(!taken4, "one unpaired link too many")
        let taken5 = links.linkUp(identity(0).deviceID, paired: false, at: start)
        #expect(taken5, "a new link in place of its own old one")
        let taken6 = links.linkUp(identity(101).deviceID, paired: true, at: start)
        #expect(taken6, "a paired device always")
        links.setPaired(identity(1).deviceID, true)
        let taken7 = links.linkUp(identity(102).deviceID, paired: false, at: start)
        #expect(taken7, "one unpaired fewer: room again")
    }

    @Test func whileADeviceIsWaitedForHexdBroadcastsEveryMinute() {
        var links = Links(ownDeviceID: Self.own)
        _ = links.started(at: start)
        let phone = identity(1)
        links.wait(for: phone.deviceID, true)
        #expect(links.deadline == start + Links.waitingInterval)
        let due8 = links.tick(at: start + .seconds(59))
        #expect(due8.isEmpty)
        let due9 = links.tick(at: start + .seconds(60))
        #expect(due9 == [.broadcast])
        let taken8 = links.linkUp(phone.deviceID, paired: true, at: start + .seconds(61))
        #expect(taken8)
        #expect(links.deadline == nil, "linked: nothing to broadcast for")
        let due10 = links.tick(at: start + .seconds(200))
        #expect(due10.isEmpty)
        links.linkDown(phone.deviceID)
        let due11 = links.tick(at: start + .seconds(201))
        #expect(due11 == [.broadcast])
        links.wait(for: phone.deviceID, false)
        #expect(links.deadline == nil)
    }

    @Test func refreshesAreSpaced() {
        var links = Links(ownDeviceID: Self.own)
        let refreshed1 = links.refresh(at: start)
        #expect(refreshed1 == [.broadcast])
        let refreshed2 = links.refresh(at: start + .milliseconds(500))
        #expect(refreshed2.isEmpty)
        let refreshed3 = links.refresh(at: start + .seconds(1))
        #expect(refreshed3 == [.broadcast])
    }

    @Test func aFloodOfInventedDevicesIsBounded() {
        var links = Links(ownDeviceID: Self.own)
        for index in 0..<(Links.capacity * 3) {
            _ = links.heard(identity(index), from: "10.0.\(index / 250).\(index % 250)", at: start)
        }
        // Every dial fails at once: the next ones start, until none is left.
        var dialed = 0
        for round in 0..<(Links.capacity * 3) {
            let due = links.tick(at: start + .seconds(1))
            #expect(due.count <= Links.dialsAtOnce)
            guard !due.isEmpty else { break }
            dialed += due.count
            for case .dial(let identity, _) in due { links.dialFailed(identity.deviceID, at: start + .seconds(1)) }
            #expect(round < Links.capacity)
        }
        #expect(dialed == Links.capacity, "the dials of the devices heard last, no more")
    }

    @Test func dialsAreBoundedAndAFailedDeviceWaitsItsBackoff() {
        var links = Links(ownDeviceID: Self.own)
        for index in 0..<20 { _ = links.heard(identity(index), from: "10.0.0.\(index)", at: start) }
        let first = links.tick(at: start + .seconds(1))
        #expect(first.count == Links.dialsAtOnce)
        #expect(links.deadline == nil, "the others wait for a dial to end")
        let dialed = first.compactMap { action -> String? in
            if case .dial(let identity, _) = action { identity.deviceID } else { nil }
        }
        links.dialFailed(dialed[0], at: start + .seconds(2))
        let next = links.tick(at: start + .seconds(2))
        #expect(next.count == 1, "one ended, one more starts")
        _ = links.heard(identity(0), from: "10.0.0.0", at: start + .seconds(3))
        let retry = links.tick(at: start + .seconds(4))
        #expect(
            !retry.contains { if case .dial(let identity, _) = $0 { identity.deviceID == dialed[0] } else { false } })
    }

    @Test func aDialGoesToTheFirstAddressHeard() {
        var links = Links(ownDeviceID: Self.own)
        let phone = identity(1)
        _ = links.heard(phone, from: "10.0.0.2", at: start)
        _ = links.heard(phone, from: "10.0.0.66", at: start + .milliseconds(600))
        let due = links.tick(at: start + .seconds(1))
        #expect(due == [.dial(phone, at: "10.0.0.2")])
    }
}
