/// The step both sides take once the secure channel is up: the other side's connection response is
/// read, and, when it accepts, hexd's paired-key encryption frame goes out.
enum PairedKeyStep {
    /// Why the other side's connection response (`frame`) ends the connection; nil when it accepts.
    /// - Parameter side: who sent it, for the reason (`sender`, `receiver`).
    static func refusal(ofConnectionResponse frame: [UInt8], from side: String) -> String? {
        guard case .connectionResponse(let response) = try? OfflineFrame(protobuf: frame) else {
            return "the \(side)'s connection response is not one"
        }
        return response.accepted ? nil : "the \(side) turned the connection down"
    }

    /// hexd's paired-key encryption frame: six and 72 random bytes, as NearDrop sends, since
    /// without Google's certificates there is nothing to sign.
    static var frame: SharingFrame {
        .pairedKeyEncryption(
            secretIDHash: (try? SecureRandom.bytes(6)) ?? [], signedData: (try? SecureRandom.bytes(72)) ?? [])
    }
}
