import HexCarrier
import HexControl
import HexKit

/// `fetch`, `grants` and `revoke`: the files peers shared with this device, and those it shared.
extension ControlHandler {
    /// The most grants `grants` lists (newest first).
    static let grantsListed = 1_000

    /// Fetches the chosen `hexd://` links of a hex one after the other, writing a `fetch` report
    /// for each as it comes (every fraction of a second) and as it ends; the last response says
    /// how many landed, or is the error of those that did not.
    func fetchFiles(
        _ request: FetchRequest, write: (ControlResponse) async throws -> Void
    ) async throws -> ControlResponse {
        guard let fetcher else { throw ControlError(.usage, "a daemon playing a legacy peer fetches no files") }
        let hex = try await service.show(request.hex)
        let numbered = Array(zip(1..., hex.links))
        let chosen =
            request.numbers.isEmpty
            ? numbered.filter { PeerFileLink($0.1.url) != nil }
            : try request.numbers.map { number in
                guard number <= numbered.count else {
                    throw ControlError(.usage, "hex \(hex.id.shortText) has \(numbered.count) links, no link \(number)")
                }
                return numbered[number - 1]
            }
        guard !chosen.isEmpty else {
            throw ControlError(
                .notFound,
                "hex \(hex.id.shortText) has no hexd:// links to fetch (its links open in a browser)")
        }
        let folder = DownloadsFolder(path: request.downloads ?? fetcher.defaultFolder.path)
        var failures: [(number: Int, error: FetchError)] = []
        for (number, link) in chosen {
            let ended = await fetcher.fetch(link, number: number, of: hex, into: folder) { progress in
                try? await write(ControlResponse(fetch: FetchReport(progress)))
            }
            try await write(ControlResponse(fetch: FetchReport(ended)))
            if let error = ended.error { failures.append((number, error)) }
        }
        guard let first = failures.first else { return ControlResponse(end: ListEnd(count: chosen.count, more: false)) }
        let code: ControlError.Code =
            switch first.error.kind {
            case .unreachable, .noRoom: .unreachable
            case .refused: .rejected
            case .corrupt, .local: .failed
            }
        throw ControlError(
            code,
            "\(failures.count) of \(chosen.count) files not fetched; "
                + "link \(first.number): \(first.error)")
    }

    /// The grants, newest first, one per response.
    func streamGrants(write: (ControlResponse) async throws -> Void) async throws -> ControlResponse {
        let grants = try await service.grants(limit: Self.grantsListed + 1)
        for grant in grants.prefix(Self.grantsListed) { try await write(ControlResponse(grant: grant)) }
        let listed = min(grants.count, Self.grantsListed)
        return ControlResponse(end: ListEnd(count: listed, more: grants.count > listed))
    }
}
