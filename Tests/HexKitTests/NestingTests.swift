import HexKit
import Testing

/// Nesting at every depth from 1 to 1,100, at every place a peer can put it: an envelope decodes
/// exactly when the whole line is nested at most 512 deep, and is `malformedJSON` beyond.
@Suite(.timeLimit(.minutes(5))) struct NestingTests {
    /// Where the nested value goes, and how deep that place already is.
    private static let places: [(name: String, baseDepth: Int, line: @Sendable (String) -> String)] = [
        ("the whole line", 0, { $0 }),
        ("an unknown envelope key", 1, { #"{"versionID":"1","operationType":"Alert","x":\#($0)}"# }),
        ("versionID", 1, { #"{"versionID":\#($0),"operationType":"Alert"}"# }),
        ("an unknown hex key", 2, { #"{"versionID":"1","operationType":"Store","jmObject":{"x":\#($0)}}"# }),
        ("links", 2, { #"{"versionID":"1","operationType":"Store","jmObject":{"links":\#($0)}}"# }),
        ("a link entry", 3, { #"{"versionID":"1","operationType":"Store","jmObject":{"links":[\#($0)]}}"# }),
        ("a link's url", 4, { #"{"versionID":"1","operationType":"Store","jmObject":{"links":[{"url":\#($0)}]}}"# }),
        (
            "an opaque jmObject", 2,
            { #"{"versionID":"1","operationType":"Sync","jmObjectType":"F","jmObject":{"x":\#($0)}}"# }
        ),
    ]

    @Test func everyDepthAtEveryPlace() throws {
        for place in Self.places {
            for depth in 1...1_100 {
                // Arrays and objects alternate, so both kinds of container are counted.
                let open = (0..<depth).map { $0.isMultiple(of: 2) ? "[" : #"{"k":"# }.joined()
                let close = (0..<depth).reversed().map { $0.isMultiple(of: 2) ? "]" : "}" }.joined()
                let line = Array(place.line(open + "1" + close).utf8)
                let total = place.baseDepth + depth
                do {
                    _ = try Envelope.decode(from: line)
                    #expect(total <= 512, "\(place.name), depth \(depth): decoded at total depth \(total)")
                } catch .malformedJSON {
                    #expect(total > 512, "\(place.name), depth \(depth): refused at total depth \(total)")
                } catch {
                    // Only the place itself can make the line something else than an envelope.
                    #expect(place.baseDepth <= 1 && error != .malformedJSON, "\(place.name), depth \(depth): \(error)")
                }
            }
        }
    }
}
