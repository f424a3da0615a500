import HexEngine
import HexKit
import KDEConnectCore
import Testing

/// Pairing with a KDE Connect device, both ways, on fake clocks: the person decides, requests
/// expire after 30 s, protocol 8's dates are checked, and hexd never asks a device it holds paired.
@Suite(.timeLimit(.minutes(1))) struct KDEConnectPairingTests {
    private let start = ContinuousClock.now
    private let now: Int64 = 1_764_198_000
    private static let request = KDEConnectPair(pair: true)
    private static let refusal = KDEConnectPair(pair: false)

    @Test func aRequestFromTheDeviceWaitsForThePerson() throws {
        var pairing = KDEConnectPairing(paired: false, version: 7)
        let asked = pairing.received(Self.request, at: start, wallClock: now)
        #expect(asked == [.askPerson(timestamp: nil)] && pairing.deadline == start + .seconds(30))
        let again = pairing.received(Self.request, at: start + .seconds(1), wallClock: now)
        #expect(again.isEmpty, "a repeat asks nothing more")
        let accepted = try pairing.accept()
        #expect(accepted == [.send(KDEConnectPair(pair: true)), .trust] && pairing.isPaired)
        #expect(pairing.deadline == nil)
    }

    /// Accepted (by the person, or by the device answering hexd's request), but the store could
    /// not keep the certificate: not paired after all, and the device is told so.
    @Test func aPairingTheStoreCouldNotKeepIsUndoneOnBothSides() throws {
        var accepted = KDEConnectPairing(paired: false, version: 7)
        _ = accepted.received(Self.request, at: start, wallClock: now)
        _ = try accepted.accept()
        let undone = accepted.trustNotKept()
        #expect(undone == [.send(Self.refusal)] && accepted.state == .notPaired)
        let again = accepted.trustNotKept()
        #expect(again.isEmpty, "undone once")

        var asked = KDEConnectPairing(paired: false, version: 8)
        _ = try asked.request(at: start, wallClock: now)
        let answered = asked.received(Self.request, at: start, wallClock: now)
        #expect(answered == [.trust] && asked.isPaired)
        let told = asked.trustNotKept()
        #expect(told == [.send(Self.refusal)] && !asked.isPaired)
    }

    @Test func aRequestDeclinedOrLeftUnansweredEnds() throws {
        var declined = KDEConnectPairing(paired: false, version: 7)
        _ = declined.received(Self.request, at: start, wallClock: now)
        let no = try declined.decline(at: start)
        #expect(no == [.send(Self.refusal), .ended(.declinedByPerson)] && declined.state == .notPaired)
        #expect(throws: KDEConnectPairing.Refusal.noRequest) { try declined.accept() }

        var forgotten = KDEConnectPairing(paired: false, version: 7)
        _ = forgotten.received(Self.request, at: start, wallClock: now)
        let early = forgotten.tick(at: start + .seconds(29))
        #expect(early.isEmpty)
        let late = forgotten.tick(at: start + .seconds(30))
        #expect(late == [.send(Self.refusal), .ended(.expired)])
        #expect(throws: KDEConnectPairing.Refusal.noRequest, "too late to accept") { try forgotten.accept() }
    }

    @Test func hexdsRequestIsDatedAndAcceptedOrDeclinedByTheDevice() throws {
        var pairing = KDEConnectPairing(paired: false, version: 7)
        let sent = try pairing.request(at: start, wallClock: now)
        #expect(sent == [.send(KDEConnectPair(pair: true, timestamp: now))], "dated for every version")
        let accepted = pairing.received(Self.request, at: start + .seconds(3), wallClock: now)
        #expect(accepted == [.trust] && pairing.isPaired)
        #expect(throws: KDEConnectPairing.Refusal.alreadyPaired, "never pair: true to a paired device") {
            try pairing.request(at: start, wallClock: now)
        }

        var declined = KDEConnectPairing(paired: false, version: 8)
        _ = try declined.request(at: start, wallClock: now)
        let no = declined.received(Self.refusal, at: start + .seconds(1), wallClock: now)
        #expect(no == [.ended(.declinedByDevice)] && declined.state == .notPaired)
    }

    @Test func protocol8RequestsNeedADateCloseToHexdsClock() {
        let extremes: [(Int64?, Bool)] = [(Int64.min, false), (Int64.max, false)]
        for (timestamp, taken) in [(nil, false), (now - 1_801, false), (now + 1_800, true), (now, true)] + extremes {
            var pairing = KDEConnectPairing(paired: false, version: 8)
            let actions = pairing.received(KDEConnectPair(pair: true, timestamp: timestamp), at: start, wallClock: now)
            if taken {
                #expect(actions == [.askPerson(timestamp: timestamp)])
            } else {
                #expect(actions == [.send(Self.refusal), .ended(.clocksApart)] && pairing.state == .notPaired)
            }
        }
    }

    @Test func aDeviceAskingAgainAtOnceAfterARefusalIsNotAnsweredEachTime() throws {
        var pairing = KDEConnectPairing(paired: false, version: 7)
        _ = pairing.received(Self.request, at: start, wallClock: now)
        _ = try pairing.decline(at: start)
        let again = pairing.received(Self.request, at: start + .milliseconds(100), wallClock: now)
        #expect(again.isEmpty && pairing.state == .notPaired)
        let later = pairing.received(Self.request, at: start + .seconds(1), wallClock: now)
        #expect(later == [.askPerson(timestamp: nil)])
    }

    @Test func askingAndCancellingInTurnAsksThePersonOncePerSpacing() {
        var pairing = KDEConnectPairing(paired: false, version: 7)
        let asked = pairing.received(Self.request, at: start, wallClock: now)
        #expect(asked == [.askPerson(timestamp: nil)])
        let cancelled = pairing.received(Self.refusal, at: start + .milliseconds(10), wallClock: now)
        #expect(cancelled == [.ended(.cancelledByDevice)])
        let soon = pairing.received(Self.request, at: start + .milliseconds(20), wallClock: now)
        #expect(soon.isEmpty, "asked again at once: not shown")
        let later = pairing.received(Self.request, at: start + .seconds(2), wallClock: now)
        #expect(later == [.askPerson(timestamp: nil)], "a second later it is")
    }

    @Test func unpairingGoesBothWays() throws {
        var byPerson = KDEConnectPairing(paired: true, version: 7)
        let unpaired = try byPerson.unpair(at: start)
        #expect(unpaired == [.send(Self.refusal), .distrust] && !byPerson.isPaired)
        #expect(throws: KDEConnectPairing.Refusal.notPaired) { try byPerson.unpair(at: start) }

        var byDevice = KDEConnectPairing(paired: true, version: 7)
        let told = byDevice.received(Self.refusal, at: start, wallClock: now)
        #expect(told == [.distrust] && !byDevice.isPaired)
    }

    @Test func aPairedDeviceThatAsksAgainIsForgottenAndAsksThePerson() {
        var pairing = KDEConnectPairing(paired: true, version: 7)
        let actions = pairing.received(Self.request, at: start, wallClock: now)
        #expect(actions == [.distrust, .askPerson(timestamp: nil)])
        #expect(pairing.state == .requestedByPeer(since: start, timestamp: nil))
    }

    @Test func packetsOfADeviceNotPairedAreRefusedAtAPace() {
        var pairing = KDEConnectPairing(paired: false, version: 7)
        let first = pairing.otherPacket(at: start)
        let second = pairing.otherPacket(at: start + .milliseconds(500))
        let third = pairing.otherPacket(at: start + .seconds(1))
        #expect(!first.taken && first.actions == [.send(Self.refusal)])
        #expect(!second.taken && second.actions.isEmpty)
        #expect(third.actions == [.send(Self.refusal)])
        var requesting = KDEConnectPairing(paired: false, version: 7)
        _ = requesting.received(Self.request, at: start, wallClock: now)
        let during = requesting.otherPacket(at: start)
        #expect(!during.taken && during.actions.isEmpty, "its request stays")
        var paired = KDEConnectPairing(paired: true, version: 7)
        let taken = paired.otherPacket(at: start)
        #expect(taken.taken && taken.actions.isEmpty)
    }
}
