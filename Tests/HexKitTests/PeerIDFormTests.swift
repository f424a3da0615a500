import Foundation
import HexKit
import Testing

/// The open set of ID forms: HexKit knows none but UUIDs until a protocol registers its own.
@Suite(.timeLimit(.minutes(1))) struct PeerIDFormTests {
    static let example = ExampleIDForms.kind
    static let proved = ExampleIDForms.proved
    static let unproved = ExampleIDForms.unproved

    @Test func aFormNotRegisteredIsNoPeerID() {
        let text = "unregistered:abc123"
        #expect(text.canonicalPeerID == nil && !text.isKeyDerivedID && text.canonicalSenderID == nil)
        #expect(text.shortPeerID == "unregistered:abc123", "still shortened as the shape of an ID, for hexctl")
        #expect(Self.proved.id("ABC123") == "example:abc123", "a form spells its IDs without being registered")
    }

    @Test func aRegisteredFormReadsItsIDsInOneSpelling() {
        PeerIDForms.register([Self.proved, Self.unproved])
        #expect(" EXAMPLE:ABC123 ".canonicalPeerID == "example:abc123", "any case, white space around it dropped")
        #expect("example:abc12".canonicalPeerID == nil && "example:".canonicalPeerID == nil)
        #expect("example:abc123".isKeyDerivedID && "example:abc123".canonicalSenderID == "example:abc123")
        #expect(!"example:ABC123".isKeyDerivedID, "an ID in another spelling is not this form's")
        #expect("Example-Open:ab".canonicalPeerID == "example-open:AB")
        #expect(!"example-open:AB".isKeyDerivedID && "example-open:AB".canonicalSenderID == nil, "nothing proves it")
        #expect(PeerIDForms.form(of: "EXAMPLE-OPEN:x")?.unproved == "is open")
        #expect(Self.proved.owns("example:abc123") && !Self.proved.owns("example-open:AB"))
        #expect("example:ABCDEF12".shortPeerID == nil, "8 digits are not the form, nor a UUID")
        #expect("example:FFEEDD".shortPeerID == "example:ffeedd")
    }

    @Test func aTableTakesAPrefixOnceAndHasABound() {
        var table = PeerIDFormTable()
        table.register([Self.proved, PeerIDForm(kind: Self.example, prefix: "example:") { _ in "x" }])
        #expect(
            table.forms.count == 1 && table.form(of: "EXAMPLE:abc123")?.canonical("example:ABC123") == "example:abc123")
        let many = (0..<(PeerIDFormTable.capacity + 4)).map { index in
            PeerIDForm(kind: Self.example, prefix: "many\(index):") { $0 }
        }
        table.register(many)
        #expect(table.forms.count == PeerIDFormTable.capacity, "the table has a bound")
        #expect(table.form(of: "many\(PeerIDFormTable.capacity + 3):x") == nil && table.form(of: "many0:x") != nil)
    }

    @Test(arguments: ["hexd", "localsend", "quick-share2"]) func aKindsNameIsReadBack(_ name: String) {
        #expect(PeerKind(rawValue: name)?.rawValue == name)
    }

    @Test(arguments: ["", "HexD", "a b", "under_score", String(repeating: "k", count: 33), "é"])
    func aKindsNameWithoutTheFormIsRefused(_ name: String) {
        #expect(PeerKind(rawValue: name) == nil)
    }

    @Test func aKindNotKnownHereStillDecodes() throws {
        let kind = try JSONDecoder().decode([PeerKind].self, from: Data(#"["bluetooth-le"]"#.utf8))
        #expect(kind.first?.rawValue == "bluetooth-le")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([PeerKind].self, from: Data(#"["A B"]"#.utf8)) }
    }
}
