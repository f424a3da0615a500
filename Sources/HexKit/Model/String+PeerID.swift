extension String {
    /// The text as a peer ID in the one spelling hexd keeps: a UUID in upper case, or the ID of a
    /// device of another protocol in its registered form (`PeerIDForms`); nil for anything else.
    public var canonicalPeerID: String? {
        if let uuid = canonicalUUID { return uuid }
        let text = trimmed
        return PeerIDForms.form(of: text)?.canonical(text)
    }

    /// The ID as lists show it beside a name: a UUID's first 8 digits (`6F9619FF`), a device of
    /// another kind its prefix and the first 8 characters after it (`kdeconnect:9b48eaa8`), in its
    /// registered form's spelling. Text of a prefix not registered here (hexctl registers none) is
    /// shortened as it is when it has the shape of an ID: a kind's name, a colon and a word. Nil for
    /// other text.
    public var shortPeerID: String? {
        if let uuid = canonicalUUID { return String(uuid.prefix(8)) }
        let text = trimmed
        let id: String
        if let form = PeerIDForms.form(of: text) {
            guard let canonical = form.canonical(text) else { return nil }
            id = canonical
        } else {
            id = text
        }
        guard let colon = id.firstIndex(of: ":") else { return nil }
        let name = String(id[id.index(after: colon)...])
        guard PeerKind(rawValue: String(id[..<colon])) != nil,
            PeerIDForm.isWord(name, lengths: 1...64, dashAndUnderscore: true)
        else { return nil }
        return String(id[...colon]) + name.prefix(8)
    }

    /// The text as the ID a hex may name as its sender (`canonicalPeerID`): a UUID, or the ID of a
    /// device its key proves; never one nothing proves (`PeerIDForm.unproved`), since what hexd takes
    /// from such a device is counted by its address.
    public var canonicalSenderID: String? {
        guard let id = canonicalPeerID else { return nil }
        switch PeerIDForms.form(of: id)?.unproved {
        case .some: return nil
        case .none: return id
        }
    }

    /// Whether the text is an ID a key proves: a key-derived device ID (see `UUID.isKeyDerived`), or
    /// a device's of another protocol whose form its key proves (`PeerIDForm.unproved` nil).
    public var isKeyDerivedID: Bool {
        if let uuid = UUID(strict: self) { return uuid.isKeyDerived }
        guard let form = PeerIDForms.form(of: self) else { return false }
        return form.unproved == nil && form.owns(self)
    }
}
