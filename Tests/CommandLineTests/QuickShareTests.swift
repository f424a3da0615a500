import Foundation
import HexControl
import HexDBus
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import HexTestTools
import QuickShareCore
import Testing

/// hexd as a Quick Share receiver, as a real daemon on loopback, with a phone made of the core's
/// sending machine (`QuickShareSender`): Tests/netns/quickshare.sh tests it against pyquickshare and
/// an Android-like sender in namespaces; this is the same path in `swift test`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct QuickShareTests {
    /// The daemon's Quick Share port, as its status gives it once its carriers are up (`hexctl wait`).
    private func port(of daemon: DaemonProcess) async throws -> UInt16 {
        let ready = try await daemon.hexctl(["wait", "--timeout", "10"])
        #expect(ready.status == 0, "\(ready.standardError)")
        return try #require(try await daemon.quickShareStatus()?.port)
    }

    @Test func aLinkAPhoneSharesLandsInTheInboxAsAHexOfThatLink() async throws {
        let daemon = try await DaemonProcess(name: "Desk", discoveryPort: try DaemonProcess.freeDiscoveryPort())
        var phone = try QuickShareSender(
            share: OutgoingShare(texts: [.init(kind: .url, text: "https://example.com/shared")]))
        try await phone.run(to: Endpoint(.loopback, port: try await port(of: daemon)))
        #expect(phone.outcome == .delivered)
        let hex = try #require(try await daemon.newestInboxHex())
        #expect(hex.links.map(\.url) == ["https://example.com/shared"])
        #expect(hex.senderName == "Pixel 8")
    }

    @Test func filesWaitForThePersonWhoSeesThePhonesPinAndLandWhole() async throws {
        let work = try TemporaryDirectory()
        let daemon = try await DaemonProcess(
            name: "Desk", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
            extraArguments: ["--downloads", work.file("downloads")])
        let bytes = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let share = OutgoingShare(files: [.init(name: "photo.jpg", size: Int64(bytes.count), mimeType: "image/jpeg")])
        let port = try await port(of: daemon)
        let sending = Task {
            var phone = try QuickShareSender(share: share)
            try await phone.run(to: Endpoint(.loopback, port: port), files: [Int64(bytes.count)]) { _, offset, count in
                Array(bytes[Int(offset)..<Int(offset) + count])
            }
            return phone
        }
        var offer: String?
        try await waitUntil("the offer is listed", timeout: .seconds(10)) {
            let peers = try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"])
            offer = peers.compactMap { $0.pairing?.offer }.first
            return offer != nil
        }
        let accepted = try await daemon.hexctl(["pair", "--accept", "Pixel 8"])
        #expect(accepted.status == 0, "\(accepted.standardError)")
        let phone = try await sending.value
        #expect(phone.outcome == .delivered)
        #expect(offer?.contains("(PIN \(phone.pin))") == true, "the offer: \(offer ?? "none")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("downloads/photo.jpg"))) == Data(bytes))
        let hex = try #require(try await daemon.newestInboxHex())
        #expect(hex.hexDescription == "photo.jpg")
    }
}

/// Waking phones by Bluetooth LE, as a real daemon does it: BlueZ on a private bus is
/// Tests/dbus/bluez_standin.py, written from BlueZ's source (Tests/netns/quickshare.sh also has a
/// waiting send register and withdraw the advertisement).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct QuickShareBluetoothTests {
    static let standIn =
        #filePath.split(separator: "/").dropLast(2).map { "/" + $0 }.joined() + "/dbus/bluez_standin.py"

    /// A daemon whose system bus is `bus`, with BlueZ on it as the stand-in, its adapter on or off.
    private func daemon(on bus: PrivateBus, powered: Bool) async throws -> (DaemonProcess, SpawnedProcess, String) {
        let probe = try await PackageExecutable.run("/usr/bin/env", ["python3", "-c", "import jeepney"])
        try ExternalTool.require(pythonModule: "jeepney", found: probe.status == 0)
        let log = bus.directory.file("bluez.jsonl")
        let standIn = try SpawnedProcess(
            "/usr/bin/env", ["python3", Self.standIn, bus.address, log, "--powered", powered ? "on" : "off"])
        try await waitUntil("the BlueZ stand-in is on the bus", timeout: .seconds(10)) {
            (try? String(contentsOfFile: log, encoding: .utf8))?.contains("ready") == true
        }
        let daemon = try await DaemonProcess(
            name: "Desk", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(try await daemon.hexctl(["wait", "--timeout", "10"]).status == 0, "the carriers are up")
        return (daemon, standIn, log)
    }

    private func note(of daemon: DaemonProcess) async throws -> String {
        try #require(try await daemon.quickShareStatus()?.notes.last)
    }

    @Test func aRefreshHasBlueZBroadcastQuickSharesWakeUpUntilBlueZEndsIt() async throws {
        let bus = try await PrivateBus(daemon: try ExternalTool.require("dbus-daemon"))
        let (daemon, standIn, log) = try await daemon(on: bus, powered: true)
        defer { standIn.send(SIGKILL) }
        #expect(try await note(of: daemon).hasPrefix("hexd wakes phones nearby by Bluetooth LE"))
        #expect(try await daemon.hexctl(["peers", "--refresh"]).status == 0)
        try await waitUntil("BlueZ advertises", timeout: .seconds(10)) {
            (try? String(contentsOfFile: log, encoding: .utf8))?.contains("\"registered\"") == true
        }
        let registered = try String(contentsOfFile: log, encoding: .utf8)
        #expect(registered.contains("\"0000fe2c-0000-1000-8000-00805f9b34fb\": \"fc128e0142000000000000000000"))
        #expect(registered.contains("\"type\": \"broadcast\""))
        try await waitUntil("the status says so", timeout: .seconds(5)) {
            try await note(of: daemon) == "waking phones nearby by Bluetooth LE through BlueZ (/org/bluez/hci0)"
        }

        // Another client of the bus is answered, and cannot end the advertisement: only BlueZ may.
        let client = try #require(registered.split(separator: "\"").drop { $0 != "client" }.dropFirst(2).first)
        let stranger = try await DBusConnection.connect(to: try DBusAddress(parsing: bus.address))
        defer { stranger.close() }
        let path = "/org/hexd/quickshare/advertisement0"
        try await stranger.call(.call(String(client), path, "org.bluez.LEAdvertisement1", "Release"))
        for (object, member, refusal) in [
            (path, "Frobnicate", "org.freedesktop.DBus.Error.UnknownMethod"),
            ("/elsewhere", "Release", "org.freedesktop.DBus.Error.UnknownObject"),
        ] {
            do {
                try await stranger.call(.call(String(client), object, "org.bluez.LEAdvertisement1", member))
                Issue.record("\(member) at \(object) was answered")
            } catch DBusError.remote(let name, _) {
                #expect(name == refusal)
            }
        }
        #expect(try await note(of: daemon) == "waking phones nearby by Bluetooth LE through BlueZ (/org/bluez/hci0)")

        standIn.send(SIGUSR1)
        try await waitUntil("the status says BlueZ ended it", timeout: .seconds(10)) {
            try await note(of: daemon).hasPrefix(
                "cannot wake phones by Bluetooth LE: the Bluetooth service ended the advertisement")
        }
    }

    @Test func anAdapterThatIsOffIsLeftOffAndSaidInTheStatus() async throws {
        let bus = try await PrivateBus(daemon: try ExternalTool.require("dbus-daemon"))
        let (daemon, standIn, log) = try await daemon(on: bus, powered: false)
        defer { standIn.send(SIGKILL) }
        #expect(try await daemon.hexctl(["peers", "--refresh"]).status == 0)
        try await waitUntil("the status says why", timeout: .seconds(10)) {
            try await note(of: daemon)
                == "cannot wake phones by Bluetooth LE: the Bluetooth adapter /org/bluez/hci0 is off; a phone is "
                + "listed as a receiver while its Quick Share receive screen is open"
        }
        let recorded = try String(contentsOfFile: log, encoding: .utf8)
        #expect(
            !recorded.contains("registered") && !recorded.contains("refused"), "nothing was asked of BlueZ: \(recorded)"
        )
    }

    @Test func withoutBlueZTheStatusSaysSoAndHexdServesOn() async throws {
        let bus = try await PrivateBus(daemon: try ExternalTool.require("dbus-daemon"))
        let daemon = try await DaemonProcess(
            name: "Desk", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(try await daemon.hexctl(["wait", "--timeout", "10"]).status == 0, "the carriers are up")
        #expect(try await daemon.hexctl(["peers", "--refresh"]).status == 0)
        try await waitUntil("the status says why", timeout: .seconds(10)) {
            try await note(of: daemon).hasPrefix("cannot wake phones by Bluetooth LE: BlueZ (org.bluez) is not running")
        }
        #expect(try await daemon.hexctl(["status"]).status == 0)
    }
}

extension DaemonProcess {
    /// What the daemon's status says of Quick Share; nil while it is no Quick Share device.
    fileprivate func quickShareStatus() async throws -> CarrierReport? {
        try await hexctlJSON(StatusReport.self, ["status"]).carriers?.first { $0.kind == .quickshare }
    }
}
