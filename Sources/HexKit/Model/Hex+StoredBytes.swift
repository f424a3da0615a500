extension Hex {
    /// About what a row of the `hex` table costs, beside its strings: its ids, position, time
    /// and index entries, and the messageID recorded with it.
    public static let bytesPerHexRow = 256
    /// About what a row of the `link` table costs beside its strings.
    public static let bytesPerLinkRow = 128

    /// What this hex counts against the inbox's budgets: the bytes of its strings and an estimate
    /// of what its rows cost beside them. The migration to schema 6 computes the same for hexes
    /// stored before (Schema.swift), so the two must change together.
    public var storedBytes: Int {
        var bytes =
            Self.bytesPerHexRow + senderUUID.utf8.count + senderName.utf8.count
            + hexDescription.utf8.count + hexColor.utf8.count
        for link in links {
            bytes +=
                Self.bytesPerLinkRow + link.url.utf8.count + link.linkDescription.utf8.count
                + link.service.rawValue.utf8.count
        }
        return bytes
    }
}
