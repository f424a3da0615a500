import HexNet
import Testing

@Suite(.timeLimit(.minutes(5))) struct LineFramerTests {
    private func lines(_ chunks: [String], cap: Int = 100) -> [LineFramer.Item] {
        var framer = LineFramer(maximumLineLength: cap)
        var items: [LineFramer.Item] = []
        for chunk in chunks {
            framer.append(Array(chunk.utf8))
            while let item = framer.next() { items.append(item) }
        }
        return items
    }

    private func line(_ text: String) -> LineFramer.Item { .line(Array(text.utf8)) }

    @Test func linesEndWithNewlineOrCRLFAndBlankLinesAreSkipped() {
        #expect(lines(["a\nb\r\n\n  \r\n\t\nc\n"]) == [line("a"), line("b"), line("c")])
    }

    @Test func aLineSplitAcrossReadsIsJoined() {
        #expect(lines(["{\"ver", "sionID\"", ":1}\r", "\nnext\n"]) == [line("{\"versionID\":1}"), line("next")])
    }

    @Test func anUnfinishedLineWaits() {
        var framer = LineFramer(maximumLineLength: 10)
        framer.append(Array("abc".utf8))
        #expect(framer.next() == nil)
        #expect(framer.pendingByteCount == 3)
    }

    @Test func aLineOverTheCapIsReportedBeforeItsEndArrives() {
        #expect(lines([String(repeating: "x", count: 11)], cap: 10) == [.lineTooLong])
        #expect(lines([String(repeating: "x", count: 10) + "\n"], cap: 10) == [line(String(repeating: "x", count: 10))])
        #expect(
            lines(["ok\n" + String(repeating: "y", count: 11) + "\nmore\n", "even more\n"], cap: 10) == [
                line("ok"), .lineTooLong,
            ],
            "after a line that is too long the stream yields nothing more")
    }

    @Test func manySmallLinesInOneReadAreAllFound() {
        let count = 50_000
        let items = lines([String(repeating: "{}\n", count: count)])
        #expect(items.count == count && items.allSatisfy { $0 == line("{}") })
    }

    @Test func bytesAreKeptAsTheyCame() {
        var framer = LineFramer(maximumLineLength: 100)
        framer.append([0xFF, 0x00, 0x0D, 0x41, 0x0A])
        #expect(framer.next() == .line([0xFF, 0x00, 0x0D, 0x41]), "only a \\r right before the \\n is dropped")
    }
}
