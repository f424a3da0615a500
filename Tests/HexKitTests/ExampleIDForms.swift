import HexKit

/// A made-up protocol's ID forms, for HexKit's tests of devices that are not hexd peers: HexKit knows
/// no real protocol's.
enum ExampleIDForms {
    static let kind = PeerKind(declaring: "example")
    /// Devices their keys prove: 6 hex digits, kept in lower case.
    static let proved = PeerIDForm(kind: kind, prefix: "example:") { name in
        name.utf8.count == 6 && name.allSatisfy(\.isHexDigit) ? name.lowercased() : nil
    }
    /// Devices nothing proves: 1 to 8 letters or digits, kept in upper case.
    static let unproved = PeerIDForm(kind: kind, prefix: "example-open:", unproved: "is open") { name in
        PeerIDForm.isWord(name, lengths: 1...8, dashAndUnderscore: false) ? name.uppercased() : nil
    }

    /// The ID of a device its key proves, both forms registered.
    static func provedDevice(_ digits: String = "abc123") -> String {
        PeerIDForms.register([proved, unproved])
        return proved.id(digits) ?? ""
    }
}
