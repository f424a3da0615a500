import HexKit

extension PeerKind {
    /// A Quick Share device (Android's share sheet, Google's Windows app), which has no identity beyond
    /// one connection: known by the endpoint ID it publishes while it can receive.
    package static let quickshare = PeerKind(declaring: "quickshare")
}

/// The form of a Quick Share device's ID in hexd (its outbox entries, events): `quickshare:` and the
/// 4-character endpoint ID its instance name carries, in upper case. Nothing proves it.
package enum QuickShareID {
    package static let form = PeerIDForm(
        kind: .quickshare, prefix: "quickshare:", unproved: "is a Quick Share device, which has no key"
    ) { endpointID in
        PeerIDForm.isWord(endpointID, lengths: 4...4, dashAndUnderscore: false) ? endpointID.uppercased() : nil
    }

    /// The ID the device publishing `endpointID` goes by in hexd; nil unless it is 4 letters or digits.
    package static func of(endpointID: String) -> String? { form.id(endpointID) }
}
