import HexHarness
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    @Suite struct HexctlDecodeTests {
        static let examples =
            #filePath.split(separator: "/").dropLast(3).map { "/" + $0 }.joined() + "/Examples/envelopes"

        /// An endless input (`/dev/zero`) is refused at 64 MiB with a clear error, never read into
        /// memory until the process dies.
        @Test func everyReaderOfAFileStopsAt64MiB() async throws {
            let directory = try TemporaryDirectory()
            let commands = [
                ["decode", "/dev/zero"], ["raw", "127.0.0.1:1", "/dev/zero"],
                ["send", "--to", "x", "--file", "/dev/zero", "--data-dir", directory.path],
            ]
            for command in commands {
                let result = try await PackageExecutable.run("hexctl", command)
                #expect(
                    result.status == 1 && result.standardError.contains("/dev/zero is larger than 64 MiB"),
                    "\(command): \(result.status) \(result.standardError)")
            }
        }

        @Test func decodeShowsWhatHexdMakesOfAnEnvelope() async throws {
            let result = try await PackageExecutable.run(
                "hexctl", ["decode", Self.examples + "/05-wrong-types-and-nulls.envelope"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(
                result.standardOutput == #"""
                    line 1: operationType "Store", versionID "1.2"
                      hex: hexDescription "", hexColor "", senderName "42", senderUUID ""
                      link 1: url "https://example.net/a", linkDescription "7.5", service ""
                      link 2: url "", linkDescription "second", service ""

                    """#)
        }

        @Test func decodeJSONGivesOneObjectPerLineAndExitsOneOnAnUnreadableLine() async throws {
            let input = #"""
                {"versionID":"1.0","operationType":"Store","jmObject":{"senderName":"A","links":[{"url":"u"}]}}

                not json\#r
                {"versionID":"4","operationType":"Sync","messageID":"M"}
                """#
            let result = try await PackageExecutable.run("hexctl", ["decode", "--json"], input: Data(input.utf8))
            #expect(result.status == 1)
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "the blank line is skipped")
            struct EnvelopeShape: Decodable { let operationType: String }
            struct Line: Decodable {
                let line: Int
                let error: String?
                let hex: Hex?
                let envelope: EnvelopeShape?
            }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let parsed = try lines.map { try decoder.decode(Line.self, from: Data($0.utf8)) }
            #expect(parsed.map(\.line) == [1, 3, 4])
            #expect(
                parsed[0].hex?.senderName == "A" && parsed[0].hex?.links.first?.url == "u"
                    && parsed[0].hex?.hexColor == "")
            #expect(parsed[1].error?.contains("not valid UTF-8 JSON") == true)
            #expect(parsed[2].envelope?.operationType == "Sync" && parsed[2].hex == nil)
        }

        @Test func everyExampleThatDecodesDecodesThroughHexctl() async throws {
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.examples).filter {
                $0.hasSuffix(".envelope")
            }.sorted()
            for name in names {
                let result = try await PackageExecutable.run(
                    "hexctl", ["decode", "--json", Self.examples + "/" + name])
                let expected = try #require(
                    FileManager.default.contents(
                        atPath: Self.examples + "/" + name.replacingOccurrences(of: ".envelope", with: ".expected.json")
                    ))
                let decodes = String(decoding: expected, as: UTF8.self).contains(#""decode": "ok""#)
                #expect(result.status == (decodes ? 0 : 1), "\(name)")
            }
        }

        @Test(arguments: [[String](), ["decode", "a", "b"], ["decode", "--fast"], ["frobnicate"]])
        func hexctlRejectsABadCommandLineWithUsage(_ arguments: [String]) async throws {
            let result = try await PackageExecutable.run("hexctl", arguments)
            #expect(result.status == 64)
        }

        @Test func controlCharactersFromAPeerArePrintedEscaped() async throws {
            let line = #"{"versionID":"1","operationType":"Alert","message":"\u001b[2J\u0007bell"}"#
            let result = try await PackageExecutable.run("hexctl", ["decode"], input: Data(line.utf8))
            #expect(!result.standardOutput.contains("\u{1B}") && !result.standardOutput.contains("\u{7}"))
            #expect(result.standardOutput.contains(#"message "\u001b[2J\u0007bell""#))
        }

        @Test func aMissingFileIsAnError() async throws {
            let result = try await PackageExecutable.run("hexctl", ["decode", "/nonexistent/file.envelope"])
            #expect(result.status == 1 && result.standardError.contains("cannot read /nonexistent/file.envelope"))
        }
    }
}
