import HexDBus
import QuickShareCore

/// One Bluetooth LE advertisement registered with BlueZ over the system bus, as BlueZ's D-Bus API asks
/// (`doc/org.bluez.LEAdvertisingManager.rst`, `src/advertising.c`): hexd serves an
/// `org.bluez.LEAdvertisement1` object on its own connection, and registers its path with the first
/// adapter's `LEAdvertisingManager1`. BlueZ then reads the object's properties (through
/// `ObjectManager.GetManagedObjects` on its path, else `Properties.GetAll`) before it answers, and
/// advertises while the connection lasts; `close` withdraws it. hexd never powers an adapter on, and
/// never has the bus start BlueZ (whose start may switch adapters on: `main.conf`'s `AutoEnable`).
final class BlueZAdvertiser: Sendable {
    static let objectPath = "/org/hexd/quickshare/advertisement0"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"
    private static let managerInterface = "org.bluez.LEAdvertisingManager1"
    private static let adapterInterface = "org.bluez.Adapter1"
    private static let objectManager = "org.freedesktop.DBus.ObjectManager"
    private static let properties = "org.freedesktop.DBus.Properties"
    /// How long a registration may take in all: BlueZ reads the object back before it answers.
    static let registrationLimit: Duration = .seconds(15)

    /// Why an advertisement could not be had, for the status and the log.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let connection: DBusConnection
    /// The adapter advertising (`/org/bluez/hci0`).
    let adapter: String
    private let serving: Task<Void, Never>

    private init(connection: DBusConnection, adapter: String, serving: Task<Void, Never>) {
        (self.connection, self.adapter, self.serving) = (connection, adapter, serving)
    }

    /// Connects to `bus`, finds an adapter that is on, serves `advertisement` and registers it, all
    /// within `registrationLimit`. `released` is called when BlueZ ends the advertisement by itself
    /// (a `Release`, or BlueZ leaving the bus), or the bus goes away.
    /// - Throws: `Failure` saying why (no BlueZ, no adapter, the adapter off, BlueZ's refusal).
    static func register(
        _ advertisement: NudgeAdvertisement, on bus: DBusAddress, released: @escaping @Sendable () async -> Void
    ) async throws(Failure) -> BlueZAdvertiser {
        let deadline = ContinuousClock.now + registrationLimit
        func left() -> Duration { max(deadline - .now, .milliseconds(1)) }
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: bus, timeout: min(left(), .seconds(2)))
        } catch {
            throw Failure(description: "cannot reach the system bus: \(error)")
        }
        do {
            // BlueZ leaving the bus (a crash, a restart) ends the advertisement without a Release.
            try await connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'")
            let (adapter, owner) = try await findAdapter(on: connection, timeout: left())
            let object = AdvertisementObject(advertisement: advertisement, blueZ: owner)
            let serving = Task {
                for await message in connection.signals {
                    if message.kind == .methodCall, await object.answer(message, on: connection) {
                        await released()
                    } else if message.kind == .signal, message.member == "NameOwnerChanged",
                        message.sender == "org.freedesktop.DBus", message.body.first?.stringValue == "org.bluez"
                    {
                        await released()
                    }
                }
                // Cancelled: `close`; else the bus ended the connection, and the advertisement with it.
                if !Task.isCancelled { await released() }
            }
            let advertiser = BlueZAdvertiser(connection: connection, adapter: adapter, serving: serving)
            do {
                try await connection.call(
                    blueZ(
                        adapter, managerInterface, "RegisterAdvertisement",
                        [.objectPath(objectPath), .dictionary(key: .string, value: .variant, [])]),
                    timeout: left())
            } catch DBusError.remote(let name, let message) {
                advertiser.close()
                throw Failure(description: "BlueZ refused the advertisement on \(adapter): \(message) (\(name))")
            } catch {
                advertiser.close()
                throw Failure(description: "BlueZ did not take the advertisement on \(adapter): \(error)")
            }
            return advertiser
        } catch let failure as Failure {
            connection.close()
            throw failure
        } catch {
            connection.close()
            throw Failure(description: "\(error)")
        }
    }

    /// A call to BlueZ that the bus must not start BlueZ for (flag 0x2, `NO_AUTO_START`).
    private static func blueZ(_ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = [])
        -> DBusMessage
    {
        var message = DBusMessage.call("org.bluez", path, interface, member, body)
        message.flags |= 0x2
        return message
    }

    /// The first adapter (by path) that can advertise and is on, and BlueZ's unique name on the bus.
    private static func findAdapter(on connection: DBusConnection, timeout: Duration) async throws
        -> (String, String?)
    {
        let reply: DBusMessage
        do {
            reply = try await connection.call(blueZ("/", objectManager, "GetManagedObjects"), timeout: timeout)
        } catch DBusError.remote(let name, _)
            where name == "org.freedesktop.DBus.Error.ServiceUnknown"
            || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
        {
            throw Failure(description: "BlueZ (org.bluez) is not running on the system bus")
        }
        guard case .dictionary(_, _, let objects)? = reply.body.first else {
            throw Failure(description: "BlueZ listed its objects in a form hexd does not read")
        }
        var switchedOff: String?
        for object in objects.sorted(by: { ($0.key.objectPathValue ?? "") < ($1.key.objectPathValue ?? "") }) {
            guard let path = object.key.objectPathValue, case .dictionary(_, _, let interfaces) = object.value,
                interfaces.contains(where: { $0.key.stringValue == managerInterface })
            else { continue }
            let adapter = interfaces.first { $0.key.stringValue == adapterInterface }?.value
            guard case .dictionary(_, _, let properties)? = adapter,
                case .variant(.boolean(false))? = properties.first(where: { $0.key.stringValue == "Powered" })?.value
            else { return (path, reply.sender) }
            switchedOff = switchedOff ?? path
        }
        if let switchedOff { throw Failure(description: "the Bluetooth adapter \(switchedOff) is off") }
        throw Failure(description: "BlueZ has no Bluetooth adapter that can advertise")
    }

    /// Whether the connection has ended (and the advertisement with it).
    var isClosed: Bool { connection.isClosed }

    /// Withdraws the advertisement and ends the connection (BlueZ drops what a connection registered
    /// when it ends, should the withdrawal not get through).
    func close() {
        serving.cancel()
        connection.close()
    }

    /// Withdraws the advertisement, waiting at most a couple of seconds for BlueZ, then ends the connection.
    func unregister() async {
        _ = try? await connection.call(
            Self.blueZ(adapter, Self.managerInterface, "UnregisterAdvertisement", [.objectPath(Self.objectPath)]),
            timeout: .seconds(2))
        close()
    }
}

/// The `org.bluez.LEAdvertisement1` object BlueZ reads: a broadcast with Quick Share's service data.
private final class AdvertisementObject: Sendable {
    private let properties: [DBusValue.DictionaryEntry]
    /// BlueZ's unique name: only BlueZ may say it released the advertisement.
    private let blueZ: String?

    init(advertisement: NudgeAdvertisement, blueZ: String?) {
        self.blueZ = blueZ
        properties = [
            .init(.string("Type"), .variant(.string("broadcast"))),
            .init(
                .string("ServiceData"),
                .variant(
                    .dictionary(
                        key: .string, value: .variant,
                        [
                            .init(
                                .string(NudgeAdvertisement.serviceUUID),
                                .variant(.array(.byte, advertisement.serviceData.map { .byte($0) })))
                        ]))),
        ]
    }

    private var propertyDictionary: DBusValue { .dictionary(key: .string, value: .variant, properties) }

    /// Answers one call routed to this connection; true when it was BlueZ releasing the advertisement.
    func answer(_ call: DBusMessage, on connection: DBusConnection) async -> Bool {
        let unknown = "org.freedesktop.DBus.Error.UnknownMethod"
        do {
            guard call.path == BlueZAdvertiser.objectPath else {
                try await connection.replyError(
                    to: call, name: "org.freedesktop.DBus.Error.UnknownObject", "no object at \(call.path ?? "")")
                return false
            }
            switch (call.interface, call.member) {
            case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"), (nil, "GetManagedObjects"):
                let interfaces = DBusValue.dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [.init(.string(BlueZAdvertiser.advertisementInterface), propertyDictionary)])
                try await connection.reply(
                    to: call,
                    [
                        .dictionary(
                            key: .objectPath,
                            value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                            [.init(.objectPath(BlueZAdvertiser.objectPath), interfaces)])
                    ])
            case ("org.freedesktop.DBus.Properties", "GetAll"), (nil, "GetAll"):
                let ours = call.body.first?.stringValue == BlueZAdvertiser.advertisementInterface
                try await connection.reply(
                    to: call, [ours ? propertyDictionary : .dictionary(key: .string, value: .variant, [])])
            case (BlueZAdvertiser.advertisementInterface, "Release"), (nil, "Release"):
                try await connection.reply(to: call)
                return call.sender != nil && call.sender == blueZ
            default:
                try await connection.replyError(
                    to: call, name: unknown, "\(call.interface ?? "").\(call.member ?? "") is not served here")
            }
        } catch {
            // The connection is ending: its end is what the caller hears.
        }
        return false
    }
}
