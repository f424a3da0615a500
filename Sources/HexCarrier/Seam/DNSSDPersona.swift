import HexDNS
import HexNet

/// A service a carrier publishes by DNS-SD beside `_hexd._tcp`, on hexd's host name: KDE Connect's
/// `_kdeconnect._udp`, its instance named by the device ID, as the apps publish theirs.
package struct DNSSDPersona: Sendable, Equatable {
    /// The service type's two labels, as `_kdeconnect._udp`.
    package let type: String
    /// The instance's name (one DNS label, cut to 63 bytes).
    package let name: String
    package let port: UInt16
    /// The TXT record's strings (`key=value`).
    package let txtStrings: [[UInt8]]

    package init(type: String, name: String, port: UInt16, txt: [(key: String, value: String)]) {
        (self.type, self.name, self.port) = (type, name.clipped(toUTF8: DNSName.maximumLabelBytes), port)
        txtStrings = txt.map { Array("\($0.key)=\($0.value)".utf8) }
    }

    /// The service type `type` (as `_kdeconnect._udp`) as a name under `local.`.
    package static func name(ofType type: String) throws(DNSError) -> DNSName {
        try DNSName(
            labels: (type.split(separator: ".", omittingEmptySubsequences: false) + ["local"]).map { Array($0.utf8) })
    }
}

/// An instance of a service type that DNS-SD found (its SRV and TXT known), or that said goodbye.
package struct DNSSDFound: Sendable, Equatable {
    /// Its instance name.
    package let name: String
    /// Its TXT record's keys.
    package let keys: [String: String]
    /// Where it was heard (an mDNS answer comes from its publisher) or resolved to.
    package let address: IPAddress
    package let port: UInt16?
    /// How often it is heard again while it is there: a third of its records' lifetime.
    package let interval: Duration
    package let leaving: Bool

    package init(
        name: String, keys: [String: String], address: IPAddress, port: UInt16?, interval: Duration, leaving: Bool
    ) {
        (self.name, self.keys, self.address, self.port) = (name, keys, address, port)
        (self.interval, self.leaving) = (interval, leaving)
    }
}

/// DNS-SD as carriers use it, through whichever backend hexd runs (its own responder or Avahi):
/// their services published beside hexd's while hexd is visible, and the instances of a service
/// type they browse for told to them.
package protocol CarrierDNSSD: Sendable {
    /// Publishes `persona` from now on (replacing one of the same type), while hexd is visible.
    func publish(_ persona: DNSSDPersona) async
    /// Browses for `type` (as `_kdeconnect._udp`) while hexd is visible, telling `found` of each
    /// instance as it is learnt or heard again, and (hexd's own responder) of each that says
    /// goodbye: Avahi says only that one is gone, not where.
    func browse(_ type: String, found: @escaping @Sendable (DNSSDFound) async -> Void) async
}
