import HexControl
import HexHarness
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// Every number a control request carries, at its extremes, against a real daemon: each request
    /// is answered (a result or an error), and the daemon keeps serving.
    @Suite struct ControlRequestNumberTests {
        static let extremes = [
            "0", "-1", "1e300", "-1e300", "9223372036854775808", "18446744073709551616", "0.5", "2.5", #""12""#, "null",
            "true",
        ]

        /// Each numeric field with a request that uses it (`%` stands for the value), and the
        /// extremes it accepts; every other extreme must be refused as a usage error.
        static let fields: [(request: String, accepted: Set<String>)] = [
            (
                #"{"command":"send","to":"127.0.0.1:1","links":[{"url":"https://x"}],"timeout":%}"#,
                ["0.5", "2.5", "null"]
            ),
            (#"{"command":"alert","to":"127.0.0.1:1","message":"m","timeout":%}"#, ["0.5", "2.5", "null"]),
            (#"{"command":"share","save":true,"files":["/nonexistent/file"],"timeout":%}"#, ["0.5", "2.5", "null"]),
            (#"{"command":"hexlist.move","id":"00000000","index":%}"#, ["0"]),
            (#"{"command":"inbox.list","limit":%}"#, ["null"]),
            (#"{"command":"peers","limit":%}"#, ["null"]),
            (#"{"command":"watch","since":%}"#, ["0", "9223372036854775808", "null"]),
        ]

        @Test func extremeNumbersInControlRequestsAreAnsweredNeverFatal() async throws {
            let daemon = try await DaemonProcess(name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            for field in Self.fields {
                for value in Self.extremes {
                    let request = field.request.replacingOccurrences(of: "%", with: value)
                    let connection = StreamConnection(
                        socket: try StreamConnector.unix(path: daemon.dataDirectory + "/hexd.sock"),
                        maximumLineLength: 1 << 20)
                    try await connection.writeLine(Array(request.utf8), timeout: .seconds(5))
                    let accepted = field.accepted.contains(value)
                    let streaming = accepted && request.contains("watch")
                    guard let line = try await answer(on: connection, streaming: streaming, daemon: daemon) else {
                        Issue.record("the daemon closed the connection without answering \(request)")
                        continue
                    }
                    let response = try ControlCoding.decode(ControlResponse.self, from: line)
                    if streaming {
                        #expect(
                            response.event != nil,
                            "\(request) streams events: \(String(decoding: line, as: UTF8.self))")
                    } else if accepted {
                        #expect(response.error?.code != .usage, "\(request): \(response.error?.message ?? "")")
                    } else {
                        #expect(response.error?.code == .usage, "\(request) must be refused as a usage error")
                    }
                }
            }
            #expect(try await daemon.hexctl(["status"]).status == 0, "the daemon still serves")
        }

        /// The first line the daemon answers on `connection`, with a deadline that fails the test:
        /// silence throws, a closed connection is nil. An accepted watch answers with events, so
        /// for one (`streaming`) sends are queued to make events until one arrives (the first may be
        /// published before the watch is registered).
        private func answer(
            on connection: StreamConnection, streaming: Bool, daemon: DaemonProcess
        ) async throws -> [UInt8]? {
            for _ in 0..<5 {
                if streaming {
                    let queued = try await daemon.hexctl(
                        ["send", "--to", "127.0.0.1:1", "--no-wait", "https://example.com/event"])
                    #expect(queued.status == 0, "\(queued.standardError)")
                }
                do {
                    let read = try await connection.readLine(timeout: .seconds(streaming ? 3 : 15))
                    guard case .line(let line)? = read else { return nil }
                    return line
                } catch let error as SocketError where error.isTimeout && streaming {
                    continue
                }
            }
            throw WaitTimedOut(what: "a watch answers with an event")
        }

        /// hexctl's numeric options refuse their extremes as usage errors (64) before anything is sent.
        @Test func hexctlRefusesExtremeNumbersInItsOptions() async throws {
            let directory = try TemporaryDirectory()
            let commands: [[String]] = [
                ["send", "--to", "x", "https://x", "--timeout"], ["raw", "127.0.0.1:1", "/dev/null", "--timeout"],
                ["share", "--save", "/tmp/x", "--timeout"], ["inbox", "--limit"], ["peers", "--limit"],
                ["watch", "--since"],
                ["watch", "--until", "hexReceived", "--timeout"],
            ]
            for command in commands {
                for value in ["0", "-1", "1e300", "-1e300", "18446744073709551616", "nan", "inf", "twelve"]
                where !(command.contains("--since") && value == "0") {
                    let result = try await PackageExecutable.run(
                        "hexctl", command + [value, "--data-dir", directory.path])
                    #expect(
                        result.status == 64,
                        "hexctl \(command.joined(separator: " ")) \(value): \(result.status) \(result.standardError)")
                }
            }
            for words in [["--until", "nonsense"], ["--timeout", "5"]] {
                let result = try await PackageExecutable.run("hexctl", ["watch", "--data-dir", directory.path] + words)
                #expect(result.status == 64, "watch \(words): \(result.standardError)")
            }
            for index in ["-1", "1e300", "18446744073709551616", "1.5"] {
                let result = try await PackageExecutable.run(
                    "hexctl", ["hexlist", "move", "--data-dir", directory.path, "abc", index])
                #expect(result.status == 64, "hexlist move \(index)")
            }
        }
    }
}
