import HexEngine
import KDEConnectCore
import Testing

/// Which KDE Connect links hexd takes, when a device that left is gone and when a pairing request
/// ends, on a fake clock: the rules the carrier used to keep in timers of its own.
@Suite(.timeLimit(.minutes(1))) struct KDEConnectDevicesTests {
    typealias Devices = KDEConnectDevices<String>
    private let start = ContinuousClock.now
    private static let phone = "phone"

    /// The names of the devices gone among `events`.
    private func gone(_ events: [Devices.Event]) -> [String] {
        events.compactMap { if case .gone(let key, let last) = $0 { "\(key):\(last)" } else { nil } }
    }

    @Test func aNewLinkIsTheDevicesUntilItEndsAndTheDeviceIsGoneAGraceAfterItsLast() {
        var devices = Devices()
        let first = devices.add("link 1", of: Self.phone, certificate: "A", version: 8, paired: false)
        #expect(first.arrived)
        #expect(devices.check(Self.phone, certificate: "A", readAt: devices.trustGeneration) == nil)
        let second = devices.add("link 2", of: Self.phone, certificate: "A", version: 8, paired: false)
        #expect(!second.arrived, "a device that dials again has not arrived again")
        #expect(devices.newestLink(of: Self.phone) == "link 2")
        #expect(devices.newestLinks.map(\.link) == ["link 2"], "a device is listed once, by its newest link")
        let olderEnded = devices.ended(Self.phone, number: second.number, at: start)
        #expect(!olderEnded, "an older link is still up")
        #expect(devices.newestLink(of: Self.phone) == "link 1", "the next newest takes over")
        #expect(devices.deadline == nil)
        let lastEnded = devices.ended(Self.phone, number: first.number, at: start)
        #expect(lastEnded, "the last link ended")
        #expect(devices.newestLink(of: Self.phone) == nil && devices.allLinks.isEmpty)
        #expect(devices.deadline == start + Devices.leaveGrace)
        let withinGrace = devices.tick(at: start + .milliseconds(499))
        #expect(withinGrace.isEmpty, "still within the grace")
        let afterGrace = devices.tick(at: start + Devices.leaveGrace)
        #expect(gone(afterGrace) == ["phone:link 1"])
        #expect(devices[pairing: Self.phone] == nil, "its pairing went with it")
        let later = devices.tick(at: start + .seconds(5))
        #expect(devices.deadline == nil && later.isEmpty, "said gone once")
    }

    @Test func aDeviceBackWithinTheGraceWasNeverGone() {
        var devices = Devices()
        let first = devices.add("link 1", of: Self.phone, certificate: "A", version: 7, paired: true)
        let lastEnded = devices.ended(Self.phone, number: first.number, at: start)
        #expect(lastEnded)
        #expect(devices[pairing: Self.phone]?.isPaired == true, "a leaving device keeps its pairing")
        #expect(!devices.isPaired(Self.phone), "but holds no link to be paired on")
        let again = devices.add("link 2", of: Self.phone, certificate: "A", version: 8, paired: false)
        #expect(!again.arrived)
        #expect(devices.isPaired(Self.phone), "the pairing it had is kept: the store changed nothing meanwhile")
        #expect(devices[pairing: Self.phone]?.version == 8, "at the version it speaks now")
        #expect(devices.deadline == nil)
        let later = devices.tick(at: start + .seconds(1))
        #expect(later.isEmpty)
        #expect(devices.newestLink(of: Self.phone) == "link 2")
    }

    @Test func aLinkIsRefusedPastTheCapForAnotherCertificateOrAStalePairing() {
        var devices = Devices()
        for index in 1...Devices.linksPerDevice {
            #expect(devices.check(Self.phone, certificate: "A", readAt: 0) == nil)
            _ = devices.add("link \(index)", of: Self.phone, certificate: "A", version: 8, paired: false)
        }
        #expect(devices.check(Self.phone, certificate: "A", readAt: 0) == .tooManyLinks)
        #expect(devices.check("other", certificate: "B", readAt: 0) == nil, "the cap is per device")
        let others = devices.add("other's", of: "other", certificate: "B", version: 8, paired: false)
        #expect(devices.check("other", certificate: "C", readAt: 0) == .impostor)
        let strayEnded = devices.ended("other", number: others.number + 1, at: start)
        #expect(!strayEnded, "a number it never gave ends nothing")
        devices.trustChanged()
        #expect(devices.check("other", certificate: "B", readAt: 0) == .trustChanged)
        #expect(devices.check("other", certificate: "B", readAt: devices.trustGeneration) == nil)
    }

    @Test func aRequestUnansweredEndsAtItsDeadlineOnTheDevicesNewestLink() throws {
        var devices = Devices()
        _ = devices.add("link 1", of: Self.phone, certificate: "A", version: 8, paired: false)
        _ = devices.add("link 2", of: Self.phone, certificate: "A", version: 8, paired: false)
        var pairing = try #require(devices[pairing: Self.phone])
        let asked = try pairing.request(at: start, wallClock: 1_000)
        #expect(asked == [.send(KDEConnectPair(pair: true, timestamp: 1_000))])
        devices[pairing: Self.phone] = pairing
        #expect(devices.deadline == start + KDEConnectPairing.requestLifetime)
        let beforeItsEnd = devices.tick(at: start + .seconds(29))
        #expect(beforeItsEnd.isEmpty)
        let events = devices.tick(at: start + KDEConnectPairing.requestLifetime)
        guard case .pairing(let key, let link, let actions)? = events.first, events.count == 1 else {
            Issue.record("expected the request to end: \(events)")
            return
        }
        #expect(key == Self.phone && link == "link 2")
        #expect(actions == [.send(KDEConnectPair(pair: false)), .ended(.expired)])
        #expect(devices[pairing: Self.phone]?.state == .notPaired && devices.deadline == nil)
    }

    @Test func aPairingWrittenBackAfterItsDeviceLeftIsDroppedAndARequestDueMeanwhileEndsUntold() throws {
        var devices = Devices()
        let link = devices.add("link 1", of: Self.phone, certificate: "A", version: 8, paired: false)
        var pairing = try #require(devices[pairing: Self.phone])
        _ = try pairing.request(at: start - KDEConnectPairing.requestLifetime + .milliseconds(100), wallClock: 1)
        devices[pairing: Self.phone] = pairing
        let lastEnded = devices.ended(Self.phone, number: link.number, at: start)
        #expect(lastEnded)
        // The request is due before the device is gone: it ends, with no link to tell it on.
        let requestDue = devices.tick(at: start + .milliseconds(200))
        #expect(requestDue.isEmpty)
        #expect(devices.deadline == start + Devices.leaveGrace, "nothing past due is left to spin on")
        let afterGrace = devices.tick(at: start + Devices.leaveGrace)
        #expect(gone(afterGrace) == ["phone:link 1"])
        devices[pairing: Self.phone] = pairing
        #expect(devices[pairing: Self.phone] == nil, "a device with no link holds no pairing")
    }

    @Test func aPairingMovedWithinTheGraceComesBackWithTheSameCertificate() throws {
        var devices = Devices()
        let first = devices.add("link 1", of: Self.phone, certificate: "A", version: 7, paired: false)
        let lastEnded = devices.ended(Self.phone, number: first.number, at: start)
        #expect(lastEnded)
        // A request of hexd's own, moved while its answer was written and the link dropped.
        var pairing = try #require(devices[pairing: Self.phone])
        _ = try pairing.request(at: start, wallClock: 1)
        devices[pairing: Self.phone] = pairing
        #expect(devices[pairing: Self.phone] == pairing, "written within the grace, it is kept")
        _ = devices.add("link 2", of: Self.phone, certificate: "A", version: 7, paired: false)
        #expect(devices[pairing: Self.phone] == pairing, "and the device back with its certificate has it")
    }

    @Test func aDeviceBackWithAnotherCertificateOrAfterTheStoreChangedStartsOverAsTheStoreSays() {
        var devices = Devices()
        let first = devices.add("link 1", of: Self.phone, certificate: "A", version: 8, paired: true)
        let firstEnded = devices.ended(Self.phone, number: first.number, at: start)
        #expect(firstEnded)
        let impostor = devices.add("link 2", of: Self.phone, certificate: "B", version: 8, paired: false)
        #expect(!impostor.arrived)
        #expect(!devices.isPaired(Self.phone), "another certificate takes nothing the device had")
        devices = Devices()
        let paired = devices.add("link 1", of: Self.phone, certificate: "A", version: 8, paired: true)
        let pairedEnded = devices.ended(Self.phone, number: paired.number, at: start)
        #expect(pairedEnded)
        devices.trustChanged()
        #expect(devices[pairing: Self.phone] == nil, "an unpairing meanwhile ends what the device had")
        _ = devices.add("link 2", of: Self.phone, certificate: "A", version: 8, paired: false)
        #expect(!devices.isPaired(Self.phone) && devices[pairing: Self.phone]?.state == .notPaired)
    }

    @Test func devicesAreListedByTheirNewestLinkTheLatestFirst() {
        var devices = Devices()
        _ = devices.add("a1", of: "a", certificate: "A", version: 8, paired: false)
        _ = devices.add("b1", of: "b", certificate: "B", version: 8, paired: false)
        #expect(devices.newestLinks.map(\.key) == ["b", "a"])
        _ = devices.add("a2", of: "a", certificate: "A", version: 8, paired: false)
        #expect(devices.newestLinks.map(\.link) == ["a2", "b1"])
        #expect(Set(devices.allLinks.map(\.link)) == ["a1", "a2", "b1"])
    }
}
