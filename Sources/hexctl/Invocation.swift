import HexCommandLine
import HexControl
import HexKit
import HexNet

/// One run of a command: its parsed arguments and the common settings.
struct Invocation: Sendable {
    let command: Command
    let arguments: ParsedArguments
    let environment: [String: String]

    /// Print JSON instead of text.
    var json: Bool { arguments.flag(.json) }

    /// The daemon's data directory: `--data-dir`, else `HEXD_DATA_DIR`, else the default.
    var dataDirectory: DataDirectory {
        DataDirectory(explicit: arguments.value(.dataDirectory), environment: environment)
    }

    /// Sends one request to the daemon and returns its successful response.
    /// - Throws: `CommandFailure` with the exit code for the daemon's error, or 69 when no daemon runs.
    func request(
        _ request: ControlRequest, timeout: Duration? = .seconds(120),
        maximumResponseLength: Int = ControlLimits.responseLineBytes
    ) async throws -> ControlResponse {
        let response = try await connect(maximumResponseLength: maximumResponseLength).request(
            request, timeout: timeout)
        if let error = response.error { throw CommandFailure(error) }
        return response
    }

    /// One field of the response to `request`, which a successful response always has.
    func result<T>(
        _ field: KeyPath<ControlResponse, T?>, of request: ControlRequest, timeout: Duration? = .seconds(120)
    ) async throws -> T {
        guard let value = try await self.request(request, timeout: timeout)[keyPath: field] else {
            throw CommandFailure(.failure, "the daemon's answer to \(request.command.rawValue) lacks its result")
        }
        return value
    }

    /// The value of a seconds option (`--timeout`): a number above 0, at most a day.
    func seconds(_ option: OptionKey) throws(UsageError) -> Double? {
        guard let text = arguments.value(option) else { return nil }
        guard let seconds = Double(text), Duration.seconds(validating: seconds, in: Self.secondsRange) != nil,
            seconds > 0
        else {
            throw UsageError(
                "--\(option.name) needs seconds, more than 0 and at most \(Int(Self.secondsRange.upperBound)), "
                    + "not '\(text)'")
        }
        return seconds
    }

    static let secondsRange = 0.0...86_400

    /// Runs a list command (`make` builds its request from the page `--limit` and `--after`
    /// ask for), handing each item to `item` as it arrives.
    func list(_ make: (ListPage) -> ControlRequest, item: (ControlResponse) throws -> Void) async throws -> ListEnd {
        var page = ListPage()
        if let text = arguments.value(.limit) {
            guard let value = Int(text), value > 0 else {
                throw UsageError("--limit needs a whole number, 1 or more, not '\(text)'")
            }
            page.limit = value
        }
        if let text = arguments.value(.after) {
            guard let id = UUID(uuidString: text) else {
                throw UsageError("--after needs the id or UUID the previous page ended with, not '\(text)'")
            }
            page.after = id
        }
        do {
            return try await connect().list(make(page), timeout: .seconds(120), item: item)
        } catch let error as ControlError {
            throw CommandFailure(error)
        }
    }

    func connect(maximumResponseLength: Int = ControlLimits.responseLineBytes) throws -> ControlClient {
        let path = dataDirectory.socketPath
        do {
            return try ControlClient(socketPath: path, maximumResponseLength: maximumResponseLength)
        } catch {
            let reason = (error as? SocketError)?.reasonText ?? "\(error)"
            throw CommandFailure(
                .unavailable,
                "hexd is not running with the data directory \(dataDirectory.path) (its control socket: \(reason)); "
                    + "start it with: hexd --data-dir \(dataDirectory.path)")
        }
    }
}

/// A failed command: what to print and the exit code scripts see.
struct CommandFailure: Error, CustomStringConvertible {
    let code: ExitCode
    let description: String

    init(_ code: ExitCode, _ description: String) {
        self.code = code
        self.description = description
    }

    /// The exit code for an error the daemon reported.
    init(_ error: ControlError) {
        let code: ExitCode =
            switch error.code {
            case .usage: .usage
            case .unreachable, .queued: .temporaryFailure
            case .rejected: .denied
            case .notFound, .failed: .failure
            }
        self.init(code, error.message)
    }
}
