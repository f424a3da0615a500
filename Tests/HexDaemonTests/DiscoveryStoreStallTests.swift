import Foundation
import HexCarrier
import HexKit
import HexNet
import HexTestSupport
import Testing

@testable import HexDaemon

/// Discovery while the store's thread is busy, as it is during a commit that waits for a slow
/// disk (thirty daemons syncing at once on a loaded CI machine): beacons still go out, and the
/// beacons of peers already listed are still taken. When the first beacon of a new peer waited
/// for its pinned key to be read, one daemon fell silent for three intervals and every other
/// daemon dropped it.
///
/// Nothing here is timed but the deadlines a loaded machine cannot miss: the store is held until
/// the test has seen what it waits for, or given up.
@Suite struct DiscoveryStoreStallTests {
    @Test func beaconsGoOutAndListedPeersAreHeardWhileTheStoreIsBusy() async throws {
        let home = try CarrierHome("Stalled")
        // A loopback address of this test's own: a socket bound to a port the system picks may share
        // it with another test's socket (SO_REUSEADDR), which would then get the datagrams.
        let own = IPv4Address(127, 86, .random(in: 0...255), .random(in: 1...254))
        let socket = try DatagramSocket(address: .v4(own), port: 0)
        let listener = try DatagramSocket(address: .v4(own), port: 0)
        let sender = try DatagramSocket(address: .v4(own), port: 0)
        var settings = DiscoverySettings()
        // Loopback only: its own port (where its beacons are heard back and ignored) and the test's.
        settings.port = socket.port
        settings.broadcastAddresses = [own]
        settings.staticPeers = try [#require(DiscoverySettings.StaticPeer("\(own):\(listener.port)"))]
        settings.announceInterval = .milliseconds(100)
        let discovery = Discovery(
            socket: socket, socket6: nil, settings: settings, versionID: HexdVersion.current,
            identity: home.service.identity, signer: nil, boot: 1, tcpPort: 1, directory: home.peers,
            events: home.events, service: home.service, logger: home.logger, visibility: .visible)
        let running = Task { await discovery.run() }
        defer { running.cancel() }
        let offer = { (beacon: Beacon) throws in try sender.send(beacon.encoded(), to: .v4(own), port: socket.port) }

        // A peer listed before the store is busy: its pinned key (none) is known from now on.
        let listed = Self.beacon(named: "Listed")
        try offer(listed)
        try await waitUntil("the first peer is listed", timeout: .seconds(30)) {
            await home.peers.peer(uuid: listed.peer) != nil
        }
        let newcomer = Self.beacon(named: "Newcomer")
        var renamed = listed
        renamed.name = "Listed, renamed"
        renamed.instance = UUID().uuidString
        var restartTaken = true
        var beacons = 0
        var newcomerMeanwhile = false
        try await home.service.held {
            // A newcomer, whose pinned key must be read from the store; then the listed peer again,
            // restarted under a new name (a peer found again is remembered in the store, later).
            try offer(newcomer)
            try offer(renamed)
            // The restart is taken, and this daemon announces itself five times. On the old code
            // neither happened until the store answered.
            do {
                try await waitUntil("the listed peer's restart is taken", timeout: .seconds(30)) {
                    await home.peers.peer(uuid: listed.peer)?.name == renamed.name
                }
                // Not counted: the beacons sent so far, those from before the store was held among them.
                while try await listener.receive(maximumLength: Beacon.maximumSize, before: .now) != nil {}
                let end = ContinuousClock.now + .seconds(30)
                while beacons < 5,
                    let datagram = try await listener.receive(maximumLength: Beacon.maximumSize, before: end)
                {
                    if Beacon.decode(datagram.bytes)?.peer == home.service.identity.uuid { beacons += 1 }
                }
            } catch {
                restartTaken = false
            }
            newcomerMeanwhile = await home.peers.peer(uuid: newcomer.peer) != nil
        }
        #expect(restartTaken, "a listed peer's restart waited for the store")
        #expect(beacons >= 5, "\(beacons) beacons went out while the store was busy")
        #expect(!newcomerMeanwhile, "the newcomer was taken before its pinned key could be read")

        try await waitUntil("the newcomer is listed once the store answers", timeout: .seconds(30)) {
            await home.peers.peer(uuid: newcomer.peer) != nil
        }
        running.cancel()
        await running.value
    }

    /// A legacy peer's beacon (unsigned, as a 1.x peer sends it).
    static func beacon(named name: String) -> Beacon {
        Beacon(
            kind: .announce, peer: UUID().uuidString, instance: UUID().uuidString, name: name, versionID: "1.0.0",
            port: 1, interval: 60, capabilities: [])
    }
}
