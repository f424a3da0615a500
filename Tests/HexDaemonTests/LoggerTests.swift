import Foundation
import Testing

@testable import HexCarrier
@testable import HexDaemon

@Suite(.timeLimit(.minutes(5))) struct LoggerTests {
    let time = Date(timeIntervalSince1970: 1_795_317_000.125)

    @Test func textIsForPeopleWithTheFieldsAfterTheMessage() {
        let line = Logger(level: .info, format: .text, component: "tcp").line(
            .info, "stored hex", [("peer", "Ada Lovelace"), ("hex", "9B51")], time: time)
        #expect(line == #"2026-11-22T03:10:00.125Z info tcp: stored hex peer="Ada Lovelace" hex=9B51"#)
    }

    @Test func logfmtIsOneRecordPerLine() {
        let line = Logger(level: .info, format: .logfmt, component: "tcp").line(
            .warning, "cut \"off\"", [("peer", "a=b"), ("n", "3"), ("empty", "")], time: time)
        #expect(
            line
                == #"ts=2026-11-22T03:10:00.125Z level=warning component=tcp msg="cut \"off\"" peer="a=b" n=3 empty="""#
        )
    }

    @Test func jsonIsOneObjectPerLine() throws {
        let line = Logger(level: .info, format: .json, component: "discovery").line(
            .info, "peer found", [("peer", "Grace")], time: time)
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
        #expect(
            object == [
                "ts": "2026-11-22T03:10:00.125Z", "level": "info", "component": "discovery", "msg": "peer found",
                "peer": "Grace",
            ])
    }

    @Test func aPeersTextCannotForgeALineOrAField() {
        let forged = "x\nts=2026 level=error msg=forged"
        for format in LogFormat.allCases {
            let line = Logger(level: .info, format: format, component: "tcp").line(
                .info, "from \(forged)", [("peer", forged)], time: time)
            #expect(!line.contains("\n"), "\(format): \(line)")
        }
        #expect(Logger.logfmtValue(forged) == #""x\nts=2026 level=error msg=forged""#)
    }
}
