import HexKit
import Testing

@Suite(.timeLimit(.minutes(5))) struct TextAndUUIDTests {
    @Test(arguments: [
        ("  a b  ", "a b"), ("\t\n x\u{2003}", "x"), ("   ", ""), ("", ""), ("é", "é"),
        (" \u{00A0}6F96-19FF\r\n", "6F96-19FF"),
    ])
    func trimmingDropsWhiteSpaceAtBothEndsOnly(_ text: String, _ trimmed: String) {
        #expect(text.trimmed == trimmed)
        #expect(text[...].trimmed == trimmed)
    }

    @Test func randomUUIDsAreVersion4AndDistinct() {
        let uuids = (0..<10_000).map { _ in UUID.random() }
        #expect(Set(uuids).count == uuids.count)
        for uuid in uuids {
            #expect(uuid.uuid.6 >> 4 == 4, "version 4")
            #expect(uuid.uuid.8 >> 6 == 0b10, "RFC variant")
            // The text form Foundation reads back is the same UUID.
            #expect(UUID(uuidString: uuid.uuidString) == uuid)
        }
    }

    /// A generator that always gives the same word: the UUID is its bytes with the version and
    /// variant bits set, so no bit of randomness is lost beyond those six.
    struct Constant: RandomNumberGenerator {
        let word: UInt64
        mutating func next() -> UInt64 { word }
    }

    @Test func theVersionAndVariantAreTheOnlyBitsSet() {
        var ones = Constant(word: .max)
        #expect(UUID.random(using: &ones).uuidString == "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")
        var zeros = Constant(word: 0)
        #expect(UUID.random(using: &zeros).uuidString == "00000000-0000-4000-8000-000000000000")
    }

    @Test func uppercaseTextIsTheUUIDStringInCapitals() {
        var generator = SeededRandomGenerator(seed: 42)
        for uuid in (0..<1_000).map({ _ in UUID.random(using: &generator) }) + [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        ] {
            #expect(uuid.uppercaseText == uuid.uuidString.uppercased())
        }
        #expect(
            UUID(uuidString: "6f9619ff-8b86-4011-b42d-00c04fc964ff")?.uppercaseText
                == "6F9619FF-8B86-4011-B42D-00C04FC964FF")
    }

    @Test func aSeededGeneratorGivesDistinctIDsAndRepeatsFromItsSeed() {
        var first = SeededRandomGenerator(seed: 7)
        var again = SeededRandomGenerator(seed: 7)
        let ids = (0..<100_000).map { _ in UUID.random(using: &first) }
        #expect(Set(ids).count == ids.count)
        #expect((0..<100).map { _ in UUID.random(using: &again) } == Array(ids.prefix(100)))
        var fresh = SeededRandomGenerator()
        var other = SeededRandomGenerator()
        #expect(fresh.next() != other.next(), "seeded from the system, two generators differ")
    }

    /// Only the 36-character form reads as a UUID: no second spelling can pass for another
    /// identity. Surrounding white space is no disguise and is dropped by `canonicalUUID`.
    @Test func aUUIDFromOutsideIsReadStrictly() {
        let text = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
        #expect(UUID(strict: text)?.uppercaseText == text && UUID(strict: text.lowercased())?.uppercaseText == text)
        #expect(
            UUID(strict: text)?.isKeyDerived == true
                && UUID(strict: "6F9619FF-8B86-4011-B42D-00C04FC964FF")?.isKeyDerived == false)
        #expect(UUID(strict: text)?.shortText == "6F9619FF")
        let lookAlikes = [
            "{\(text)}", text.replacingOccurrences(of: "-", with: ""), "6\u{200D}" + text.dropFirst(),
            text + "\u{200B}",
            text.replacingOccurrences(
                of: "-",
                with: "\u{2010}"), String(text.dropLast()), text + "0", "", " \(text)",
            "6F9619FF-8B86-8011-B42D-00C04FC964FG", "6F9619FF8-B86-8011-B42D-00C04FC964FF",
        ]
        for lookAlike in lookAlikes {
            #expect(UUID(strict: lookAlike) == nil, "\(lookAlike.debugDescription)")
        }
        #expect(" \(text.lowercased())\n".canonicalUUID == text && "{\(text)}".canonicalUUID == nil)
    }
}
