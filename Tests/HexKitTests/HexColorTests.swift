import HexKit
import Testing

@Suite(.timeLimit(.minutes(5))) struct HexColorTests {
    @Test(arguments: [("#3498db", "#3498DB"), ("3498DB", "#3498DB"), ("#AAAAAA", "#AAAAAA")])
    func validColoursBecomeUppercaseWithAHash(_ color: String, _ normalized: String) {
        #expect(HexColor.normalized(color) == normalized)
    }

    @Test(arguments: ["", "#", "#12345", "#1234567", "red", "#GGGGGG", "##123456", "#１２３４５６", " #123456"])
    func anythingElseIsNotAColour(_ color: String) {
        #expect(HexColor.normalized(color) == nil)
    }
}
