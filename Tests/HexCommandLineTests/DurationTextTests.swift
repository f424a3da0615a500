import HexCommandLine
import Testing

/// Durations as a command line takes them: seconds, or a number and one unit.
@Suite(.timeLimit(.minutes(5))) struct DurationTextTests {
    @Test(arguments: [("90", 90.0), ("30s", 30), ("10m", 600), ("1.5h", 5_400), ("1d", 86_400), ("0.5", 0.5)])
    func aNumberAndAUnitAreSeconds(_ text: String, _ seconds: Double) {
        #expect(DurationText.seconds(text) == seconds)
    }

    @Test(arguments: [
        "", "m", "0", "0s", "-5m", "+5", "5 m", "5mm", "1e3", "inf", "nan", "1.2.3", "5w", "٣m", ".",
        "10M",
    ])
    func anythingElseIsNot(_ text: String) {
        #expect(DurationText.seconds(text) == nil)
    }
}
