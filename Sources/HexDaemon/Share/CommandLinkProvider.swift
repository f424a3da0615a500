import HexKit
import HexNet

/// Runs a configured command once per file (for example a cloud tool that prints a public link):
/// the template's words with `{path}` replaced by the file, run without a shell (so a file name
/// cannot inject anything), found through PATH. The first line of standard output is the link; a
/// non-zero exit, no output, or running past the timeout is a failure that carries standard error.
struct CommandLinkProvider: LinkProvider {
    let service: Service
    /// The command's words, `{path}` where the file goes.
    let words: [String]
    let timeout: Duration
    let limit: ConcurrencyLimit

    init(template: String, service: Service, timeout: Duration, concurrency: Int) {
        words = template.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        self.service = service
        self.timeout = timeout
        limit = ConcurrencyLimit(concurrency)
    }

    func link(for path: String, to recipient: FileGrants.Recipient?) async throws -> String {
        let arguments = words.map {
            $0.split(separator: "{path}", omittingEmptySubsequences: false).joined(separator: path)
        }
        let command = arguments.joined(separator: " ")
        let result: ChildProcess.Result
        do {
            result = try await limit.run { try await ChildProcess.run(arguments, timeout: timeout) }
        } catch let error as ChildProcessError {
            throw LinkProviderError(error.description)
        }
        let errors = result.errorLine().isEmpty ? "" : ": " + result.errorLine()
        guard !result.timedOut else { throw LinkProviderError("\(command): no answer within \(timeout)\(errors)") }
        guard let code = result.exitCode else { throw LinkProviderError("\(command) was killed by a signal\(errors)") }
        guard code == 0 else { throw LinkProviderError("\(command) exited with \(code)\(errors)") }
        let link = result.standardOutput.split(whereSeparator: \.isNewline).first.map { String($0).trimmed } ?? ""
        guard !link.isEmpty else { throw LinkProviderError("\(command) printed no link\(errors)") }
        return link
    }

}

/// At most `permits` operations at once; the others wait their turn in order.
actor ConcurrencyLimit {
    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ permits: Int) {
        available = max(permits, 1)
    }

    func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        if available > 0 {
            available -= 1
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
        defer { release() }
        // A task cancelled while it waited gives its turn back without starting.
        try Task.checkCancellation()
        return try await operation()
    }

    private func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
