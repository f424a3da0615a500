/// Which protocol a peer speaks: hexd's own (the original app's envelopes, over TLS between
/// key-derived IDs), or another one hexd speaks to reach the devices people already own.
public enum PeerKind: String, Sendable, Codable, CaseIterable {
    case hexd
    /// A LocalSend app (or another program speaking LocalSend's protocol), known by the
    /// fingerprint of its certificate; or, with its encryption off (plain HTTP), by the random
    /// text it announces instead, which proves nothing.
    case localsend
    /// A KDE Connect app (or GSConnect, Valent), known by its device ID, which its certificate's
    /// common name carries.
    case kdeconnect
    /// A Quick Share device (Android's share sheet, Google's Windows app), which has no identity
    /// beyond one connection: known by the endpoint ID it publishes while it can receive.
    case quickshare
}

extension PeerKind {
    /// What a KDE Connect device's ID in hexd starts with; its own device ID follows.
    public static let kdeConnectPrefix = "kdeconnect:"

    /// The ID a KDE Connect device goes by in hexd (its inbox, outbox, pairing, blocks):
    /// `kdeconnect:` and its device ID in lower case, as the apps make them (hexd's store matches
    /// IDs in any case). Nil unless `deviceID` has the form the apps accept since January 2025:
    /// `^[a-zA-Z0-9_-]{32,38}$`.
    public static func kdeConnectID(deviceID: String) -> String? {
        isWord(deviceID, lengths: 32...38, dashAndUnderscore: true) ? kdeConnectPrefix + deviceID.lowercased() : nil
    }

    /// What a LocalSend device's ID in hexd starts with; its certificate's fingerprint follows.
    public static let localSendPrefix = "localsend:"

    /// The ID a LocalSend device goes by in hexd (its inbox, outbox, blocks, events): `localsend:`
    /// and its certificate's fingerprint in upper case. Nil unless `fingerprint` is 64 hex digits.
    public static func localSendID(fingerprint: String) -> String? {
        HexDigits.isHex(fingerprint, count: 64) ? localSendPrefix + fingerprint.uppercased() : nil
    }

    /// What the ID of a LocalSend device with its encryption off starts with; the random text it
    /// announces as its fingerprint follows.
    public static let localSendHTTPPrefix = "localsend-http:"

    /// The ID a LocalSend device whose encryption is off goes by in hexd: `localsend-http:` and
    /// the text it announces as its fingerprint, in upper case. That text is any the device likes
    /// (the apps make a random one), so hexd takes 1 to 64 letters, digits, `-` and `_`, and no
    /// other: nil otherwise. Nothing proves it; it is never a key-derived ID.
    public static func localSendHTTPID(fingerprint: String) -> String? {
        isWord(fingerprint, lengths: 1...64, dashAndUnderscore: true)
            ? localSendHTTPPrefix + fingerprint.uppercased() : nil
    }

    /// Whether `text` is `lengths` ASCII letters and digits long, and `-` and `_` when `dashAndUnderscore`.
    static func isWord(_ text: String, lengths: ClosedRange<Int>, dashAndUnderscore: Bool) -> Bool {
        lengths.contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    true
                case UInt8(ascii: "-"), UInt8(ascii: "_"): dashAndUnderscore
                default: false
                }
            }
    }
}

extension PeerKind {
    /// What a Quick Share device's ID in hexd starts with; its endpoint ID follows.
    public static let quickSharePrefix = "quickshare:"

    /// The ID a Quick Share device goes by in hexd (its outbox entries, events): `quickshare:` and the
    /// 4-character endpoint ID its instance name carries, in upper case. Nil unless `endpointID` is 4
    /// letters or digits.
    public static func quickShareID(endpointID: String) -> String? {
        isWord(endpointID, lengths: 4...4, dashAndUnderscore: false) ? quickSharePrefix + endpointID.uppercased() : nil
    }
}

extension String {
    /// The text as a peer ID in the one spelling hexd keeps: a UUID in upper case, a LocalSend
    /// device's ID (`PeerKind.localSendID`, `PeerKind.localSendHTTPID`) or a KDE Connect device's
    /// (`PeerKind.kdeConnectID`); nil for anything else.
    public var canonicalPeerID: String? {
        if let uuid = canonicalUUID { return uuid }
        let text = trimmed
        let lowered = text.lowercased()
        if lowered.hasPrefix(PeerKind.localSendPrefix) {
            return PeerKind.localSendID(fingerprint: String(text.dropFirst(PeerKind.localSendPrefix.count)))
        }
        if lowered.hasPrefix(PeerKind.localSendHTTPPrefix) {
            return PeerKind.localSendHTTPID(fingerprint: String(text.dropFirst(PeerKind.localSendHTTPPrefix.count)))
        }
        if lowered.hasPrefix(PeerKind.kdeConnectPrefix) {
            return PeerKind.kdeConnectID(deviceID: String(text.dropFirst(PeerKind.kdeConnectPrefix.count)))
        }
        if lowered.hasPrefix(PeerKind.quickSharePrefix) {
            return PeerKind.quickShareID(endpointID: String(text.dropFirst(PeerKind.quickSharePrefix.count)))
        }
        return nil
    }

    /// The ID as lists show it beside a name: a UUID's first 8 digits (`6F9619FF`), a device of
    /// another kind its prefix and the first 8 characters after it (`kdeconnect:9b48eaa8`); nil
    /// for text that is no peer ID.
    public var shortPeerID: String? {
        guard let id = canonicalPeerID else { return nil }
        guard let colon = id.firstIndex(of: ":") else { return String(id.prefix(8)) }
        return String(id[...colon]) + id[id.index(after: colon)...].prefix(8)
    }

    /// The text as the ID a hex may name as its sender (`canonicalPeerID`), never a LocalSend
    /// device's whose encryption is off nor a Quick Share device's: nothing proves those, and what
    /// hexd takes from such a device is counted by its address.
    public var canonicalSenderID: String? {
        canonicalPeerID.flatMap { $0.isLocalSendHTTPID || $0.isQuickShareID ? nil : $0 }
    }

    /// Whether the text is a Quick Share device's ID: sends to it go by Quick Share.
    public var isQuickShareID: Bool { hasPrefix(PeerKind.quickSharePrefix) && canonicalPeerID == self }

    /// Whether the text is a LocalSend device's ID, which its certificate proves (as a key-derived
    /// ID its key does): plaintext never speaks for it.
    public var isLocalSendID: Bool { hasPrefix(PeerKind.localSendPrefix) && canonicalPeerID == self }

    /// Whether the text is the ID of a LocalSend device whose encryption is off: nothing proves it.
    public var isLocalSendHTTPID: Bool { hasPrefix(PeerKind.localSendHTTPPrefix) && canonicalPeerID == self }

    /// Whether the text is a LocalSend device's ID, either kind: sends to it go by LocalSend.
    public var isLocalSendDeviceID: Bool { isLocalSendID || isLocalSendHTTPID }

    /// Whether the text is a KDE Connect device's ID, which its certificate proves once paired:
    /// sends to it go by KDE Connect.
    public var isKDEConnectID: Bool { hasPrefix(PeerKind.kdeConnectPrefix) && canonicalPeerID == self }

    /// The KDE Connect device ID within a KDE Connect device's ID in hexd; nil for another ID.
    public var kdeConnectDeviceID: String? {
        isKDEConnectID ? String(dropFirst(PeerKind.kdeConnectPrefix.count)) : nil
    }
}
