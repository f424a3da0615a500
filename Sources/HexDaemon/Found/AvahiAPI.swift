import HexCarrier
import HexDBus
import HexDNS
import HexNet

/// The part of Avahi's D-Bus API (`org.freedesktop.Avahi`, avahi-daemon 0.6 and later) that hexd
/// uses to publish and browse `_hexd._tcp` and its carriers' services: the calls it makes, and
/// what it reads from Avahi's signals and replies. Pure, so that every message can be checked without a bus; whatever a
/// reply holds that is not what the API promises is read as nothing.
enum AvahiAPI {
    static let name = "org.freedesktop.Avahi"
    static let serverInterface = "org.freedesktop.Avahi.Server"
    static let groupInterface = "org.freedesktop.Avahi.EntryGroup"
    static let browserInterface = "org.freedesktop.Avahi.ServiceBrowser"
    static let serviceType = "_hexd._tcp"

    /// `AVAHI_IF_UNSPEC` and `AVAHI_PROTO_UNSPEC`: every interface, both families.
    static let anyInterface: Int32 = -1
    static let anyProtocol: Int32 = -1
    /// `AVAHI_LOOKUP_RESULT_OUR_OWN`: an item this client published.
    static let ourOwn: UInt32 = 16

    /// The states of the server (`GetState`, `StateChanged`) and of an entry group.
    enum ServerState: Int32 {
        case invalid = 0, registering, running, collision, failure
    }

    enum GroupState: Int32 {
        case uncommitted = 0, registering, established, collision, failure
    }

    // MARK: Calls

    static func serverCall(_ member: String, _ body: [DBusValue] = []) -> DBusMessage {
        .call(name, "/", serverInterface, member, body)
    }

    static func groupCall(_ group: String, _ member: String, _ body: [DBusValue] = []) -> DBusMessage {
        .call(name, group, groupInterface, member, body)
    }

    /// Adds the instance `advert` describes to `group`, on every interface and both families, on
    /// Avahi's own host name (it publishes that host's addresses itself).
    static func addService(to group: String, _ advert: DNSSDAdvert) -> DBusMessage {
        groupCall(
            group, "AddService",
            [
                .int32(anyInterface), .int32(anyProtocol), .uint32(0), .string(advert.instance.firstLabel),
                .string(serviceType), .string(""), .string(""), .uint16(advert.port), .byteStrings(advert.txtStrings),
            ])
    }

    /// Adds a carrier's service to `group`, as `addService(to:_:)` adds hexd's.
    static func addService(to group: String, _ persona: DNSSDPersona) -> DBusMessage {
        groupCall(
            group, "AddService",
            [
                .int32(anyInterface), .int32(anyProtocol), .uint32(0), .string(persona.name), .string(persona.type),
                .string(""), .string(""), .uint16(persona.port), .byteStrings(persona.txtStrings),
            ])
    }

    static let newBrowser = newBrowser(serviceType)

    /// A browser of the service type `type`, on every interface and both families.
    static func newBrowser(_ type: String) -> DBusMessage {
        serverCall(
            "ServiceBrowserNew", [.int32(anyInterface), .int32(anyProtocol), .string(type), .string(""), .uint32(0)])
    }

    /// An instance a browser reports (`ItemNew`, `ItemRemove`): one per interface and family.
    struct Item: Hashable, Sendable {
        var key: Key
        var flags: UInt32

        /// From an `ItemNew` or `ItemRemove` signal's body (`iisssu`); nil for another body.
        init?(signal body: [DBusValue]) {
            guard body.count == 6, let interface = body[0].int32Value, let family = body[1].int32Value,
                let name = body[2].stringValue, let type = body[3].stringValue,
                let domain = body[4].stringValue, let flags = body[5].uint32Value
            else { return nil }
            key = Key(interface: interface, family: family, name: name, type: type, domain: domain)
            self.flags = flags
        }

        /// Who it is, whatever the flags say.
        struct Key: Hashable, Sendable {
            var interface: Int32
            var family: Int32
            var name: String
            /// Its service type (`_hexd._tcp`, or a carrier's).
            var type: String
            var domain: String
        }
    }

    /// Resolves `item` to an address of its own family, its port and its TXT strings.
    static func resolve(_ item: Item.Key) -> DBusMessage {
        serverCall(
            "ResolveService",
            [
                .int32(item.interface), .int32(item.family), .string(item.name), .string(item.type),
                .string(item.domain), .int32(item.family), .uint32(0),
            ])
    }

    // MARK: Replies

    /// The instance a `ResolveService` reply (`iissssisqaayu`) describes, present or `leaving`;
    /// nil when the reply is not one, or gives no port or no address. A link-local IPv6 address
    /// gets the interface Avahi heard it on as its zone.
    static func found(resolved body: [DBusValue], interval: Duration, leaving: Bool = false) -> DNSSDFound? {
        guard body.count == 11, let interface = body[0].int32Value, let name = body[2].stringValue,
            let text = body[7].stringValue, let port = body[8].uint16Value,
            let strings = body[9].byteStringsValue,
            var address = IPAddress(text)
        else { return nil }
        if case .v6(let v6) = address, v6.isLinkLocal, v6.scope == 0 {
            guard interface > 0, let scoped = IPv6Address("\(text)%\(interface)") else { return nil }
            address = .v6(scoped)
        }
        return DNSSDFound(
            name: name, keys: DNSRecordData.txt(strings).keyValues ?? [:], address: address, port: port,
            interval: interval, leaving: leaving)
    }
}
