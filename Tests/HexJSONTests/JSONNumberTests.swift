import HexJSON
import Testing

@Suite(.timeLimit(.minutes(5))) struct JSONNumberTests {
    private func number(_ text: String) throws -> JSONNumber {
        guard case .number(let number) = try JSONValue.parse(Array(text.utf8)) else {
            throw JSONError(.invalidNumber, at: 0)
        }
        return number
    }

    @Test func integersConvertOnlyWhenTheyFitExactly() throws {
        #expect(try number("0").integer(as: UInt16.self) == 0)
        #expect(try number("65535").integer(as: UInt16.self) == 65_535)
        #expect(try number("65536").integer(as: UInt16.self) == nil)
        #expect(try number("-1").integer(as: UInt16.self) == nil)
        #expect(try number("-0").integer(as: UInt16.self) == 0)
        #expect(try number("1.5").integer(as: Int.self) == nil)
        #expect(try number("3.0").integer(as: Int.self) == 3)
        #expect(try number("3e2").integer(as: Int.self) == 300)
        #expect(try number("9223372036854775807").integer(as: Int64.self) == .max)
        #expect(try number("9223372036854775808").integer(as: Int64.self) == nil)  // 2^63
        #expect(try number("-9223372036854775808").integer(as: Int64.self) == .min)
        #expect(try number("-9223372036854775809").integer(as: Int64.self) == nil)
        #expect(try number("18446744073709551615").integer(as: UInt64.self) == .max)
        #expect(try number("18446744073709551616").integer(as: UInt64.self) == nil)  // 2^64
        #expect(try number("1e300").integer(as: Int.self) == nil)
        #expect(try number("-1e300").integer(as: Int.self) == nil)
        #expect(try number("1e400").integer(as: Int.self) == nil)
        #expect(try number(String(repeating: "9", count: 10_000)).integer(as: Int.self) == nil)
    }

    @Test func doublesAreFiniteOrNil() throws {
        #expect(try number("1e300").double == 1e300)
        #expect(try number("-1e300").double == -1e300)
        #expect(try number("1e400").double == nil)
        #expect(try number("-1e400").double == nil)
        #expect(try number("1e-400").double == 0)
        #expect(try number("0.25").double == 0.25)
    }

    @Test(arguments: [
        ("42", "42"), ("-7", "-7"), ("1.5", "1.5"), ("1.0", "1"), ("1e3", "1000"), ("2.5e-1", "0.25"), ("-0", "0"),
        ("9223372036854775808", "9.223372036854776e+18"), ("1e300", "1e+300"),
    ])
    func decimalTextFollowsTheToleranceRule(_ text: String, _ decimal: String) throws {
        #expect(try number(text).decimalText == decimal)
    }

    @Test func aNumberTooLargeForADoubleHasNoDecimalText() throws {
        #expect(try number("1e999").decimalText == nil)
    }
}
