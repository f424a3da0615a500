/// Who this daemon is on the network: the sender of every hex it sends.
public struct LocalIdentity: Sendable, Hashable {
    /// Uppercase 36-character UUID, stable across restarts (the original's `senderUUID`).
    public let uuid: String
    /// Display name ("First Last" in the original app). Never empty.
    public let name: String

    /// The name used when none is configured or the configured one is blank.
    public static let defaultName = "hexd user"

    /// - Parameters:
    ///   - uuid: the peer UUID; stored uppercase, as the original app wrote it.
    ///   - name: the display name; surrounding white space is trimmed and a blank name becomes
    ///     `defaultName`, because the original app crashed on an empty sender name.
    public init(uuid: UUID, name: String) {
        self.uuid = uuid.uppercaseText
        let trimmed = name.trimmed
        self.name = trimmed.isEmpty ? Self.defaultName : trimmed
    }
}
