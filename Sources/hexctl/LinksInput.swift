import HexCommandLine
import HexControl
import HexKit

/// The links (and optionally description and colour) of a hex to send or add, from URL arguments
/// or from a JSON file or standard input.
struct HexInput {
    var description: String?
    var color: String?
    var links: [LinkJM]

    static let options = [
        Option(.description, value: "text", short: "d", help: "The hex's description."),
        Option(.color, value: "#RRGGBB", help: "The hex's colour. Default: #AAAAAA."),
        Option(
            .file, value: "path",
            help: "Read the hex from a JSON file ('-' for standard input): a HexJM object "
                + "({\"hexDescription\":…,\"hexColor\":…,\"links\":[…]}) "
                + "or an array of links ({\"url\":…,\"linkDescription\":…,\"service\":…})."
        ),
    ]

    /// Reads `--file` and the URL arguments; flags win over the file's description and colour.
    /// - Throws: `UsageError` without any link, for a URL without a scheme and host, or a file that
    ///   is neither form.
    init(_ invocation: Invocation, urls: [String]) throws {
        var links: [LinkJM] = []
        if let path = invocation.arguments.value(.file) {
            let data = try readInput(path)
            if let hex = try Self.read(path, { () throws(EnvelopeDecodingError) in try HexJM.decode(from: data) }),
                hex.links != nil || hex.hexDescription != nil
            {
                links = hex.links ?? []
                description = hex.hexDescription
                color = hex.hexColor
            } else if let array = try Self.read(
                path, { () throws(EnvelopeDecodingError) in try LinkJM.decodeList(from: data) })
            {
                links = array
            } else {
                throw UsageError("\(path) is neither a hex object nor an array of links")
            }
        }
        for text in urls {
            guard let url = LinkURL.parse(text) else {
                throw UsageError("'\(text)' is not a URL with a scheme and a host, nor a file:// URL")
            }
            links.append(LinkJM(url: text, linkDescription: LinkURL.description(of: url), service: .unknown))
        }
        guard !links.isEmpty else {
            throw UsageError(
                invocation.arguments.value(.file).map { "\($0) holds no link; give links there, or URLs as arguments" }
                    ?? "give at least one URL, or --file")
        }
        self.links = links
        description = invocation.arguments.value(.description) ?? description
        color = invocation.arguments.value(.color) ?? color
    }

    /// The hex as a request carries it.
    var draft: HexDraft {
        HexDraft(description: description ?? "", color: color ?? HexColor.fallback, links: links)
    }

    /// Runs one of the tolerant readers on a file, its failure said as a usage error naming the file.
    private static func read<T>(_ path: String, _ body: () throws(EnvelopeDecodingError) -> T) throws(UsageError) -> T {
        do {
            return try body()
        } catch .exceedsLimit(let reason, _) {
            throw UsageError("\(path) is too large: \(reason)")
        } catch {
            throw UsageError("\(path) is not valid JSON")
        }
    }
}
