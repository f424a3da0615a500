import HexEngine
import HexKit
import HexNet
import HexTLS

/// The network side of pairing: one connection to a peer, on which pairing steps are sent and
/// each answer is read before the next step.
struct PairingExchange: Sendable {
    let route: PeerRoute
    let versionID: String
    let maximumLineLength: Int
    let timeout: Duration

    /// The open connection, as a conversation of steps.
    struct Conversation {
        fileprivate let channel: EnvelopeSender.Channel
        fileprivate let versionID: String
        fileprivate let deadline: ContinuousClock.Instant

        /// The key the peer proved.
        var peerKey: Fingerprint? { channel.peerKey }
        /// Where the peer was reached.
        var endpoint: Endpoint { channel.endpoint }

        /// Writes one step and returns the answer to it: the next step, or an Ack.
        func send(_ step: PairJM) async throws -> Envelope {
            let messageID = UUID().uuidString
            try await channel.write(.pair(step, versionID: versionID, messageID: messageID), deadline: deadline)
            return try await channel.reply(to: messageID, deadline: deadline)
        }
    }

    /// Connects, runs `conversation`, and ends the connection.
    /// - Throws: `SendError`, for every way the connection or the conversation fails.
    func converse<T: Sendable>(_ conversation: @Sendable (Conversation) async throws -> T) async throws(SendError) -> T
    {
        let deadline = ContinuousClock.now + timeout
        return try await EnvelopeSender.reportingFailures(to: route.label, within: timeout) {
            let channel = try await EnvelopeSender.Channel.open(
                to: route.endpoints, security: route.security, deadline: deadline, maximumLineLength: maximumLineLength)
            let result = try await conversation(
                Conversation(channel: channel, versionID: versionID, deadline: deadline))
            channel.finish()
            return result
        }
    }
}
