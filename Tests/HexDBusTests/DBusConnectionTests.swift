import HexDBus
import HexHarness
import HexTestSupport
import HexTestTools
import Testing

/// The client against Debian's dbus-daemon, which checks every message it is sent and drops a
/// client that sends a malformed one.
@Suite(.timeLimit(.minutes(5))) struct DBusConnectionTests {
    private let bus = "org.freedesktop.DBus"
    private let busPath = "/org/freedesktop/DBus"

    @Test func aClientAuthenticatesCallsAndHearsSignals() async throws {
        let bus = try await PrivateBus(daemon: try ExternalTool.require("dbus-daemon"))
        let address = try DBusAddress(parsing: bus.address)
        let first = try await DBusConnection.connect(to: address)
        #expect(first.uniqueName.hasPrefix(":"))
        let names = try await first.call(.call(self.bus, busPath, self.bus, "ListNames"))
        guard case .array(.string, let listed)? = names.body.first else {
            Issue.record("no names")
            return
        }
        #expect(listed.contains(.string(first.uniqueName)) && listed.contains(.string(self.bus)))

        // A call the bus does not know is its error, by name.
        await #expect(
            throws: DBusError.remote(
                name: "org.freedesktop.DBus.Error.UnknownMethod",
                message: "")
        ) {
            do {
                try await first.call(.call(self.bus, busPath, self.bus, "NoSuchMethod", [.string("x")]))
            } catch DBusError.remote(let name, _) {
                throw DBusError.remote(name: name, message: "")
            }
        }

        // A call with arguments is taken by the bus (which would drop a client that sent a
        // malformed one) and answered.
        let requested = try await first.call(
            .call(
                self.bus, busPath, self.bus, "RequestName",
                [.string("org.hexd.Test"), .uint32(4)]))
        #expect(requested.body.first?.uint32Value == 1, "primary owner")

        try await first.addMatch("type='signal',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        let second = try await DBusConnection.connect(to: address)
        var heard = false
        for await signal in first.signals where signal.member == "NameOwnerChanged" {
            if signal.body.contains(.string(second.uniqueName)) {
                heard = true
                break
            }
        }
        #expect(heard, "the second client's arrival is signalled to the first")
        #expect(!first.isClosed)
        first.close()
        second.close()
        #expect(first.isClosed)
        await #expect(throws: DBusError.self) {
            try await first.call(.call(self.bus, busPath, self.bus, "ListNames"))
        }
    }

    @Test func aClientAnswersTheCallsTheBusRoutesToItWithAReplyOrAnError() async throws {
        let bus = try await PrivateBus(daemon: try ExternalTool.require("dbus-daemon"))
        let address = try DBusAddress(parsing: bus.address)
        let server = try await DBusConnection.connect(to: address)
        let client = try await DBusConnection.connect(to: address)
        defer {
            server.close()
            client.close()
        }
        let serving = Task {
            for await call in server.signals where call.kind == .methodCall {
                if call.member == "Echo" {
                    try await server.reply(to: call, [.string("echo"), .dictionary(key: .string, value: .variant, [])])
                } else {
                    try await server.replyError(to: call, name: "org.hexd.Error.Unknown", "no \(call.member ?? "")")
                }
            }
        }
        defer { serving.cancel() }
        let echoed = try await client.call(.call(server.uniqueName, "/thing", "org.hexd.Thing", "Echo"))
        #expect(echoed.body == [.string("echo"), .dictionary(key: .string, value: .variant, [])])
        await #expect(throws: DBusError.remote(name: "org.hexd.Error.Unknown", message: "no Other")) {
            try await client.call(.call(server.uniqueName, "/thing", "org.hexd.Thing", "Other"))
        }
    }

    @Test func aBusThatGoesAwayEndsCallsAndSignalsWithAnError() async throws {
        let bus = try await PrivateBus(daemon: try ExternalTool.require("dbus-daemon"))
        let connection = try await DBusConnection.connect(to: try DBusAddress(parsing: bus.address))
        bus.stop()
        for await _ in connection.signals {}
        #expect(connection.isClosed)
        await #expect(throws: DBusError.self) {
            try await connection.call(.call(self.bus, self.busPath, self.bus, "ListNames"), timeout: .seconds(2))
        }
    }

    @Test func noBusIsAnErrorNotAWait() async throws {
        let directory = try TemporaryDirectory()
        await #expect(throws: (any Error).self) {
            try await DBusConnection.connect(to: .path(directory.file("no-bus")), timeout: .seconds(2))
        }
    }
}
