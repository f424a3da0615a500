import Synchronization

/// How hexd names the devices of one kind of peer that are not hexd peers (whose IDs are UUIDs): a
/// prefix (`kdeconnect:`) and what the protocol knows the device by, in one spelling. Each protocol
/// declares its forms where it lives, and the daemon registers them (`PeerIDForms.register`) before it
/// reads an ID, so that HexKit names no protocol but hexd's.
public struct PeerIDForm: Sendable {
    /// The kind of peer whose devices go by this form.
    public let kind: PeerKind
    /// What the IDs start with, lower case, its colon included (`localsend:`).
    public let prefix: String
    /// Why nothing proves a device of this form; nil when its key does (a certificate's
    /// fingerprint, or the common name of a certificate pinned at pairing), as it does a key-derived
    /// UUID: only then may its ID name a hex's sender, or be blocked.
    public let unproved: String?
    private let spelling: @Sendable (String) -> String?

    /// - Parameters:
    ///   - unproved: why nothing proves such a device (`has LocalSend's encryption off`); nil when its key does.
    ///   - spelling: what follows the prefix in hexd's one spelling, or nil unless it has the form.
    public init(
        kind: PeerKind, prefix: String, unproved: String? = nil, spelling: @escaping @Sendable (String) -> String?
    ) {
        (self.kind, self.prefix, self.unproved, self.spelling) = (kind, prefix, unproved, spelling)
    }

    /// The ID of the device the protocol knows by `name`, in hexd's spelling; nil unless `name` has the form.
    public func id(_ name: String) -> String? { spelling(name).map { prefix + $0 } }

    /// `text` (its prefix in any case) as an ID of this form in hexd's spelling; nil when it is not one.
    public func canonical(_ text: String) -> String? {
        guard starts(text) else { return nil }
        return id(String(decoding: text.utf8.dropFirst(prefix.utf8.count), as: UTF8.self))
    }

    /// Whether `text` starts with the prefix, in any case of its ASCII letters.
    public func starts(_ text: String) -> Bool {
        text.utf8.count >= prefix.utf8.count
            && zip(text.utf8, prefix.utf8).allSatisfy { byte, wanted in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == wanted : byte == wanted
            }
    }

    /// Whether `id` is an ID of this form, in hexd's spelling.
    public func owns(_ id: String) -> Bool { id.hasPrefix(prefix) && canonical(id) == id }

    /// Whether `text` is `lengths` ASCII letters and digits long, and `-` and `_` when `dashAndUnderscore`:
    /// the shape of most devices' names for themselves.
    public static func isWord(_ text: String, lengths: ClosedRange<Int>, dashAndUnderscore: Bool) -> Bool {
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

/// ID forms by prefix, at most `capacity` of them.
public struct PeerIDFormTable: Sendable {
    /// At most this many forms: a protocol declares one or two.
    public static let capacity = 16
    public private(set) var forms: [PeerIDForm] = []

    public init() {}

    /// Adds `forms`, once each (by prefix); beyond `capacity` the rest are left out.
    public mutating func register(_ added: [PeerIDForm]) {
        for form in added where !forms.contains(where: { $0.prefix == form.prefix }) && forms.count < Self.capacity {
            forms.append(form)
        }
    }

    /// The form whose prefix `text` starts with, in any case; nil when none does.
    public func form(of text: String) -> PeerIDForm? { forms.first { $0.starts(text) } }
}

/// The ID forms of the protocols this process speaks, registered by its wiring at start (the
/// daemon registers every carrier's, on or off). A text of a form not registered is no peer ID here.
public enum PeerIDForms {
    private static let table = Mutex(PeerIDFormTable())

    /// Adds `forms` to those known (`PeerIDFormTable.register`).
    public static func register(_ forms: [PeerIDForm]) { table.withLock { $0.register(forms) } }

    /// The registered form whose prefix `text` starts with, in any case; nil when none is.
    public static func form(of text: String) -> PeerIDForm? { table.withLock { $0.form(of: text) } }
}
