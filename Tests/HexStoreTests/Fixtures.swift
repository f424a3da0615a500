import HexKit

/// A hex with `linkCount` links, for storing.
func sampleHex(_ description: String, location: HexLocation = .inbox, linkCount: Int = 2) -> Hex {
    Hex(
        location: location, senderUUID: "6F9619FF-8B86-4011-B42D-00C04FC964FF", senderName: "Jane Doe",
        hexDescription: description,
        hexColor: "#3498DB",
        links: (0..<linkCount).map {
            Link(url: "https://example.com/\(description)/\($0)", linkDescription: "link \($0)", service: .box)
        },
        isChecked: location == .myHexlist)
}

/// The bytes of a file, or nil when it does not exist.
func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
