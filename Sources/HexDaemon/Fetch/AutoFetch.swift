import HexCarrier
import HexKit

/// Fetches at once the files a paired peer shares (`hexd --auto-fetch paired`): for each hex
/// stored from a sender whose key is paired, the `hexd://` links that sender granted, one file
/// at a time, into the downloads folder. Another sender's files wait until the person asks
/// (`hexctl fetch`), and so do links a paired peer passes on from someone else.
struct AutoFetch: DaemonService {
    /// What arrives, subscribed to before the daemon takes its first envelope.
    let arrivals: AsyncStream<Arrival>
    let fetcher: FileFetcher
    let logger: Logger

    func run() async {
        for await case .hex(let hex) in arrivals {
            guard hex.senderTrust == .paired else { continue }
            let sender = hex.senderUUID.uppercased()
            for (number, link) in zip(1..., hex.links) where PeerFileLink(link.url)?.ownerID == sender {
                guard !Task.isCancelled else { return }
                // How it went is logged and published by the fetcher; a failed file keeps its
                // partial file for `hexctl fetch` to resume.
                _ = await fetcher.fetch(link, number: number, of: hex, into: fetcher.defaultFolder) { _ in }
            }
        }
    }
}
