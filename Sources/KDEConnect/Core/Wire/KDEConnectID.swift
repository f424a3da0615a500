import HexKit

extension PeerKind {
    /// A KDE Connect app (or GSConnect, Valent), known by its device ID, which its certificate's common
    /// name carries.
    public static let kdeconnect = PeerKind(declaring: "kdeconnect")
}

/// The form of a KDE Connect device's ID in hexd (its inbox, outbox, pairing, blocks): `kdeconnect:`
/// and its device ID in lower case, as the apps make them (hexd's store matches IDs in any case).
/// A device ID has the form the apps accept since January 2025: `^[a-zA-Z0-9_-]{32,38}$`.
public enum KDEConnectID {
    public static let form = PeerIDForm(kind: .kdeconnect, prefix: "kdeconnect:") { deviceID in
        PeerIDForm.isWord(deviceID, lengths: 32...38, dashAndUnderscore: true) ? deviceID.lowercased() : nil
    }

    /// The ID the device `deviceID` goes by in hexd; nil unless it has the form.
    public static func of(deviceID: String) -> String? { form.id(deviceID) }
}

extension String {
    /// Whether the text is a KDE Connect device's ID, which its certificate proves once paired:
    /// sends to it go by KDE Connect.
    public var isKDEConnectID: Bool { KDEConnectID.form.owns(self) }

    /// The KDE Connect device ID within a KDE Connect device's ID in hexd; nil for another ID.
    public var kdeConnectDeviceID: String? {
        isKDEConnectID ? String(decoding: utf8.dropFirst(KDEConnectID.form.prefix.utf8.count), as: UTF8.self) : nil
    }
}
