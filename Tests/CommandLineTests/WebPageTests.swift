import Foundation
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// The page's HTTP as a script or a browser meets it, on a real hexd (the page itself is driven
    /// in Chromium by Tests/web/page.py).
    @Suite struct WebPageTests {
        /// The page's address and token, as `hexctl open` reads them.
        private struct Page {
            let address: String
            let token: String

            init(_ daemon: DaemonProcess) throws {
                address = try String(contentsOfFile: daemon.dataDirectory + "/web.address", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                token = try String(contentsOfFile: daemon.dataDirectory + "/web.token", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }

            var bearer: String { "Authorization: Bearer \(token)\r\n" }
            var host: String { "Host: \(address)\r\n" }

            func post(_ body: String, headers: String = "") async throws -> HTTPAnswer {
                try await exchange(
                    "POST /control HTTP/1.1\r\n\(host)\(bearer)\(headers)"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
            }

            /// One request on a new connection; the answer read to its close.
            func exchange(_ request: String) async throws -> HTTPAnswer {
                let socket = try await connect()
                try await socket.write(Array(request.utf8), timeout: .seconds(10))
                var bytes: [UInt8] = []
                while try await socket.read(maximumCount: 65_536, timeout: .seconds(20), { bytes += $0 }) > 0 {}
                return HTTPAnswer(String(decoding: bytes, as: UTF8.self))
            }

            func connect() async throws -> Socket {
                let endpoint = try #require(Endpoint(parsing: address))
                return try await StreamConnector.tcp(to: endpoint, timeout: .seconds(5))
            }
        }

        private struct HTTPAnswer {
            let status: Int
            let head: String
            let body: String

            init(_ text: String) {
                let parts = text.components(separatedBy: "\r\n\r\n")
                head = parts.first ?? ""
                body = parts.dropFirst().joined(separator: "\r\n\r\n")
                status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            }

            func header(_ name: String) -> String? {
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                    .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
            }
        }

        /// An event stream opened with `lastEventID`; reads until an event names `id`.
        private func eventIDs(_ page: Page, lastEventID: String?, until id: String) async throws -> [String] {
            let socket = try await page.connect()
            let resume = lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? ""
            try await socket.write(
                Array("GET /events HTTP/1.1\r\n\(page.host)\(page.bearer)\(resume)\r\n".utf8),
                timeout: .seconds(5))
            var text = ""
            while !text.contains(id) {
                var bytes: [UInt8] = []
                let count = try await socket.read(maximumCount: 65_536, timeout: .seconds(10)) { bytes += $0 }
                guard count > 0 else { break }
                text += String(decoding: bytes, as: UTF8.self)
            }
            socket.shutdown()
            #expect(text.hasPrefix("HTTP/1.1 200 OK") && text.contains("Content-Type: text/event-stream"))
            return text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
        }

        @Test func thePageIsServedBehindItsTokenAndTheControlAPIAnswersAsOnTheSocket() async throws {
            let daemon = try await DaemonProcess(
                name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--web", "127.0.0.1:0"])
            let page = try Page(daemon)
            let tokenFile = try FileManager.default.attributesOfItem(atPath: daemon.dataDirectory + "/web.token")
            let mode = tokenFile[.posixPermissions]
            #expect(mode as? Int == 0o600, "the token is its user's alone")
            let printed = try await daemon.hexctl(["open", "--print"])
            #expect(printed.standardOutput == "http://\(page.address)/?token=\(page.token)\n")

            let login = try await page.exchange("GET /?token=\(page.token) HTTP/1.1\r\n\(page.host)\r\n")
            #expect(login.status == 200 && login.body.contains(#"<meta http-equiv="refresh" content="0;url=/">"#))
            let cookie = try #require(login.header("Set-Cookie"))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let cookiePair = String(cookie.prefix { $0 != ";" })
            let document = try await page.exchange("GET / HTTP/1.1\r\n\(page.host)Cookie: \(cookiePair)\r\n\r\n")
            #expect(document.status == 200 && document.body.contains(#"<script src="/app.js" defer>"#))
            #expect(document.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            let script = try await page.exchange("GET /app.js HTTP/1.1\r\n\(page.host)\(page.bearer)\r\n")
            #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(try await page.exchange("GET /nothing HTTP/1.1\r\n\(page.host)\(page.bearer)\r\n").status == 404)
            #expect(try await page.exchange("GET / HTTP/1.1\r\n\(page.host)\r\n").status == 401)

            let status = try await page.post(#"{"command":"status"}"#)
            #expect(status.status == 200 && status.header("Content-Type") == "application/x-ndjson")
            #expect(status.body.hasPrefix(#"{"ok":true,"status":{"#) && status.body.contains(#""name":"Ada""#))
            let garbage = try await page.post(#"{"command":"reboot"}"#)
            #expect(garbage.status == 400 && garbage.body.contains(#""code":"usage""#))
            #expect(try await page.post(#"{"command":"watch"}"#).status == 400, "watching is GET /events")
            // A list streams one line per item and an end, as on the control socket.
            let empty = try await page.post(#"{"command":"inbox.list","limit":5}"#)
            #expect(empty.status == 200 && empty.body.contains(#""end":{"count":0,"more":false}"#))
        }

        @Test func theEventStreamResumesFromTheLastIDItGave() async throws {
            let daemon = try await DaemonProcess(
                name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--web", "127.0.0.1:0"])
            let page = try Page(daemon)
            // Two sends queued to an address nobody serves: two sendQueued events at least.
            for _ in 0..<2 {
                #expect(
                    try await daemon.hexctl(["send", "--to", "127.0.0.1:9", "--no-wait", "https://example.com"])
                        .status == 0)
            }
            let replayed = try await eventIDs(page, lastEventID: "999999.1", until: ".2\n")
            let boot = try #require(replayed.first?.split(separator: ".").first)
            #expect(
                replayed.prefix(2) == ["\(boot).1", "\(boot).2"],
                "an earlier start's id replays this start's events")
            let resumed = try await eventIDs(page, lastEventID: "\(boot).1", until: ".2\n")
            #expect(resumed.first == "\(boot).2", "this start's id resumes after it")
        }

        @Test func theTokenOutlivesARestartAndASecondDaemonGoesOnWithoutThePage() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let first = try await DaemonProcess(
                name: "Ada", discoveryPort: port,
                extraArguments: ["--web", "127.0.0.1:0"])
            let page = try Page(first)
            let second = try await DaemonProcess(
                name: "Grace", discoveryPort: port,
                extraArguments: ["--web", page.address])
            #expect(second.log.contains("no inbox page: cannot listen on \(page.address)"))
            #expect(!FileManager.default.fileExists(atPath: second.dataDirectory + "/web.address"))
            #expect(try await second.hexctl(["open", "--print"]).status == 69, "no page: unavailable")
            #expect(try await second.hexctl(["status"]).status == 0, "the daemon serves on without its page")

            #expect(first.stop() == 0)
            #expect(!FileManager.default.fileExists(atPath: first.dataDirectory + "/web.address"), "removed at stop")
            let again = try await DaemonProcess(
                name: "Ada", discoveryPort: port, directory: first.directory,
                extraArguments: ["--web", "127.0.0.1:0"])
            #expect(try Page(again).token == page.token, "an open page's cookie still works after a restart")
        }
    }
}
