import HexJSON
import HexKit

/// A ping (`kdeconnect.ping`): a device's nudge, with a message to show when it carries one. The
/// apps show it as a notification (kdeconnect-android `Plugins/PingPlugin/PingPlugin.kt`, on by
/// default; kdeconnect-kde `plugins/ping`), and send one from "Send ping" (`kdeconnect-cli --ping`,
/// `--ping-msg`). hexd keeps one from a paired device as an Alert.
public struct KDEConnectPing: Sendable, Equatable {
    public static let packetType = "kdeconnect.ping"
    /// The longest message kept: a line to show, not a document.
    public static let maximumMessageBytes = 4_096
    /// What the apps show for a ping without a message.
    public static let bareText = "Ping!"

    /// The message to show, cut to `maximumMessageBytes`; nil for a bare ping.
    public var message: String?

    public init(message: String?) {
        self.message = message?.clipped(toUTF8: Self.maximumMessageBytes)
    }

    /// The ping `packet` is; nil when it is another kind of packet.
    public init?(_ packet: KDEConnectPacket) {
        guard packet.type == Self.packetType else { return nil }
        self.init(message: packet.body.string("message").flatMap { $0.trimmed.isEmpty ? nil : $0 })
    }

    /// What a person is shown: the message, or the apps' word for a bare ping.
    public var text: String { message ?? Self.bareText }

    /// The ping that shows the texts among `shares` as a notification on `device`, or nil when it
    /// needs none. A phone or tablet that takes pings needs one: the Android app puts a shared
    /// text on the clipboard, replacing what was there, with only a toast to say so
    /// (kdeconnect-android `Plugins/SharePlugin/SharePlugin.kt`), while its ping plugin, on by
    /// default, shows a ping's message as a notification (`Plugins/PingPlugin/PingPlugin.kt`).
    /// A desktop shows a shared text itself; a URL opens on any device.
    public static func notifying(_ shares: [KDEConnectShare], on device: KDEConnectIdentity) -> KDEConnectPing? {
        guard [.phone, .tablet].contains(device.deviceType), device.takes(packetType) else { return nil }
        let texts = shares.compactMap { share -> String? in
            if case .text(let text) = share { return text }
            return nil
        }
        return texts.isEmpty ? nil : KDEConnectPing(message: texts.joined(separator: "\n"))
    }

    /// The ping as a line.
    /// - Parameter id: the sender's clock in milliseconds.
    public func encoded(id: Int64) -> [UInt8] {
        KDEConnectPacket.encoded(type: Self.packetType, id: id) { $0.member("message", message) }
    }
}
