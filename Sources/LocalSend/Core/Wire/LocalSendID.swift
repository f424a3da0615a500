import HexKit

extension PeerKind {
    /// A LocalSend app (or another program speaking LocalSend's protocol), known by the fingerprint of
    /// its certificate; or, with its encryption off (plain HTTP), by the random text it announces
    /// instead, which proves nothing.
    public static let localsend = PeerKind(declaring: "localsend")
}

/// The forms of a LocalSend device's ID in hexd (its inbox, outbox, blocks, events).
public enum LocalSendID {
    /// `localsend:` and its certificate's fingerprint, 64 hex digits in upper case.
    public static let certified = PeerIDForm(kind: .localsend, prefix: "localsend:") { fingerprint in
        HexDigits.isHex(fingerprint, count: 64) ? fingerprint.uppercased() : nil
    }

    /// `localsend-http:` and the text a device whose encryption is off announces as its fingerprint,
    /// in upper case. That text is any the device likes (the apps make a random one), so hexd takes 1
    /// to 64 letters, digits, `-` and `_`, and no other. Nothing proves it; it is never a key-derived ID.
    public static let plain = PeerIDForm(
        kind: .localsend, prefix: "localsend-http:", unproved: "has LocalSend's encryption off"
    ) { fingerprint in
        PeerIDForm.isWord(fingerprint, lengths: 1...64, dashAndUnderscore: true) ? fingerprint.uppercased() : nil
    }

    /// Both forms, as the daemon registers them.
    public static let forms = [certified, plain]
}

extension String {
    /// Whether the text is the ID of a LocalSend device whose encryption is off: nothing proves it.
    public var isLocalSendHTTPID: Bool { LocalSendID.plain.owns(self) }
}
