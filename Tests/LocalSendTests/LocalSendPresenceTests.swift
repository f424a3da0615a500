import HexEngine
import HexKit
import LocalSendCore
import Testing

/// Who hexd lists as LocalSend devices and when it announces itself, event by event on a fake clock.
@Suite(.timeLimit(.minutes(1))) struct LocalSendPresenceTests {
    typealias Presence = LocalSendPresence<String>
    private let start = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1_000)) }

    private static func device(_ alias: String, _ fingerprint: String, announce: Bool? = true) -> LocalSendDevice {
        LocalSendDevice(
            alias: alias, version: "2.2", deviceModel: nil, deviceType: .mobile, fingerprint: fingerprint, port: 53_317,
            scheme: .https, announce: announce)
    }

    @Test func itAnnouncesInABurstThenAtEachRefresh() {
        var presence = Presence(ownFingerprint: "OWN", refreshInterval: .seconds(30))
        presence.start(at: at(0))
        var announced: [Double] = []
        while let deadline = presence.deadline, deadline < at(95) {
            let now = (deadline - start).inSeconds
            if presence.tick(at: deadline).contains(.announce) { announced.append((now * 10).rounded() / 10) }
        }
        #expect(announced == [0.1, 0.5, 2, 32, 62, 92])
        #expect(presence.refresh(at: at(92.5)) == [], "a refresh just after an announcement adds none")
        #expect(presence.refresh(at: at(94)) == [.announce])
        #expect(presence.resume(at: at(94.1)) == [.announce], "shown again, it announces whatever went before")
    }

    @Test func anAnnouncementIsProvenBeforeTheDeviceIsListed() throws {
        var presence = Presence(ownFingerprint: "own")
        let phone = Self.device("Pixel", "ab12")
        #expect(presence.heard(phone, from: "10.0.0.7", at: at(1)) == [.register(phone, at: "10.0.0.7")])
        #expect(presence.devices.isEmpty, "a claim alone lists nothing")
        let found = presence.proven(phone, at: "10.0.0.7", now: at(1.2))
        let listed = try #require(presence.devices.first)
        #expect(found == [.found(listed)] && listed.fingerprint == "AB12" && listed.address == "10.0.0.7")
        var answer = phone
        answer.announce = false
        #expect(presence.heard(answer, from: "10.0.0.7", at: at(20)) == [], "a proven device is not asked again")
        #expect(presence.devices.first?.lastSeen == at(1.2), "a datagram keeps no device listed")
        #expect(
            presence.heard(phone, from: "10.0.0.7", at: at(20.5)) == [.register(phone, at: "10.0.0.7")],
            "unless it asks who is there (an app that starts), which only those that answer learn")
        #expect(presence.proven(phone, at: "10.0.0.7", now: at(21)).map(\.isAnnouncedAgain) == [true])
        #expect(presence.devices.first?.lastSeen == at(21), "proven there again, as it was")
        #expect(presence.proven(phone, at: "10.0.0.7", now: at(22)) == [], "a refresh's register is no return")
        var renamed = phone
        renamed.alias = "Evil"
        #expect(
            presence.heard(renamed, from: "10.0.0.7", at: at(27)) == [.register(renamed, at: "10.0.0.7")],
            "a datagram changes no listed device: the device is asked to prove it")
        #expect(presence.devices.first?.description.alias == "Pixel")
        #expect(presence.heard(Self.device("Own", "OWN"), from: "10.0.0.1", at: at(2)) == [], "its own echo")
        var calledHexd = Self.device("Grace", "9F00")
        calledHexd.deviceModel = "hexd"
        #expect(
            presence.heard(calledHexd, from: "10.0.0.2", at: at(3)) == [.register(calledHexd, at: "10.0.0.2")],
            "a model is no proof of a hexd (only a signed claim is, which the driver checks): asked to prove it")
    }

    @Test func aDeviceAtANewAddressOrUnderANewNameIsProvenAgainAndUpdated() throws {
        var presence = Presence(ownFingerprint: "own")
        let phone = Self.device("Pixel", "AB12")
        _ = presence.proven(phone, at: "10.0.0.7", now: at(1))
        #expect(presence.heard(phone, from: "10.0.0.9", at: at(10)) == [.register(phone, at: "10.0.0.9")])
        let renamed = Self.device("Pixel 8", "ab12")
        let moved = presence.proven(renamed, at: "10.0.0.9", now: at(10.5))
        #expect(presence.devices.first?.description.alias == "Pixel 8")
        #expect(moved.map(\.isAnnouncedAgain) == [false, true], "updated, and back: it announced itself")
        guard case .updated(let device) = moved.first else {
            Issue.record("not updated: \(moved)")
            return
        }
        #expect(device.address == "10.0.0.9" && device.firstSeen == at(1))
    }

    @Test func onlyAProofFromWhereTheAnnouncementCameMakesAReturn() {
        var presence = Presence(ownFingerprint: "own")
        let phone = Self.device("Pixel", "AB12")
        _ = presence.proven(phone, at: "10.0.0.7", now: at(1))
        #expect(presence.heard(phone, from: "10.0.0.66", at: at(10)).count == 1, "anyone may claim its fingerprint")
        #expect(presence.proven(phone, at: "10.0.0.7", now: at(11)) == [], "its own routine register is no return")
        _ = presence.heard(phone, from: "10.0.0.7", at: at(20))
        #expect(presence.proven(phone, at: "10.0.0.7", now: at(21)).map(\.isAnnouncedAgain) == [true])
    }

    @Test func aDeviceHeardAtTwoAddressesKeepsTheOneItIsKeptAt() {
        var presence = Presence(ownFingerprint: "own") { listed, heard in
            listed.hasPrefix("10.") && heard.hasPrefix("fe80")
        }
        let phone = Self.device("Pixel", "AB12", announce: false)
        _ = presence.proven(phone, at: "10.0.0.7", now: at(1))
        #expect(presence.heard(phone, from: "fe80::7%2", at: at(2)) == [], "the same device over IPv6: as listed")
        #expect(
            presence.proven(phone, at: "fe80::7%2", now: at(3)) == [] && presence.devices.first?.address == "10.0.0.7")
        #expect(presence.devices.first?.lastSeen == at(3), "proven there all the same")
        #expect(presence.proven(phone, at: "10.0.0.9", now: at(4)).count == 1, "another IPv4 address moves it")
    }

    @Test func aRegisterWithItsCertificateListsAndOneWithoutIsCheckedBack() {
        var presence = Presence(ownFingerprint: "own")
        let new = Self.device("Mac", "CD34", announce: nil)
        #expect(presence.registered(new, from: "10.0.0.8", proven: true, at: at(1)).count == 1)
        #expect(presence.devices.map(\.fingerprint) == ["CD34"])
        let old = Self.device("Old phone", "EF56", announce: nil)
        #expect(
            presence.registered(old, from: "10.0.0.9", proven: false, at: at(1)) == [.register(old, at: "10.0.0.9")])
        #expect(presence.devices.count == 1, "an older app's register is listed once hexd proved it")
    }

    @Test func aDeviceWithItsEncryptionOffIsListedApartAndNeverAsACertificatesDevice() throws {
        var presence = Presence(ownFingerprint: "own")
        let fingerprint = String(repeating: "AB", count: 32)
        let phone = Self.device("Pixel", fingerprint)
        _ = presence.proven(phone, at: "10.0.0.7", now: at(1))
        // The same fingerprint, claimed by a device that says its encryption is off: asked to prove
        // it (over HTTP), and then listed beside the phone, never in its place.
        var plain = phone
        plain.scheme = .http
        plain.alias = "Pixel (forged)"
        #expect(presence.heard(plain, from: "10.0.0.66", at: at(2)) == [.register(plain, at: "10.0.0.66")])
        #expect(presence.proven(plain, at: "10.0.0.66", now: at(2.1)).count == 1)
        let byID = Dictionary(uniqueKeysWithValues: presence.devices.map { ($0.peerID, $0) })
        let proven = try #require(byID["localsend:" + fingerprint])
        #expect(proven.address == "10.0.0.7" && proven.description.alias == "Pixel" && !proven.isPlainHTTP)
        let claimed = try #require(byID["localsend-http:" + fingerprint])
        #expect(claimed.address == "10.0.0.66" && claimed.isPlainHTTP)
        // A claim hexd takes no ID from lists nothing and costs no register.
        var odd = plain
        odd.fingerprint = "not/an id"
        #expect(presence.heard(odd, from: "10.0.0.67", at: at(3)) == [])
        #expect(presence.registered(odd, from: "10.0.0.67", proven: false, at: at(3)) == [])
        #expect(presence.devices.count == 2)
    }

    @Test func aDeviceUnheardThroughTwoRefreshesIsGone() {
        var presence = Presence(ownFingerprint: "own", refreshInterval: .seconds(30))
        presence.start(at: at(0))
        _ = presence.proven(Self.device("Pixel", "AB12"), at: "10.0.0.7", now: at(1))
        #expect(presence.tick(at: at(60)).contains { if case .lost = $0 { true } else { false } } == false)
        #expect(presence.deadline.map { $0 <= at(76) } == true, "the driver wakes for the device's end")
        let gone = presence.tick(at: at(76))
        #expect(gone.contains { if case .lost(let device) = $0 { device.fingerprint == "AB12" } else { false } })
        #expect(presence.devices.isEmpty)
    }

    @Test func aFloodOfInventedDevicesCostsBoundedRegistersAndCannotGrowTheList() {
        var presence = Presence(ownFingerprint: "own", capacity: 8)
        var registers = 0
        for index in 0..<1_000 {
            let now = at(Double(index) / 1_000)  // a thousand in one second
            registers += presence.heard(Self.device("x", "F\(index)"), from: "10.0.0.\(index % 250)", at: now).count
        }
        #expect(registers <= 12, "at most the burst and a second's rate: \(registers)")
        var repeated = 0
        for second in 0..<10 {
            repeated += presence.heard(Self.device("x", "SAME"), from: "a", at: at(10 + Double(second))).count
        }
        #expect(repeated == 2, "one fingerprint is answered once per 5 s")
        for index in 0..<20 { _ = presence.proven(Self.device("x", "P\(index)"), at: "b", now: at(30 + Double(index))) }
        #expect(presence.devices.count == 8 && presence.devices.first?.fingerprint == "P19")
    }
}

extension LocalSendPresence.Action {
    fileprivate var isAnnouncedAgain: Bool { if case .announcedAgain = self { true } else { false } }
}
