import HexKit
import Testing

@Suite(.timeLimit(.minutes(1))) struct MediaTypeTests {
    @Test func aFileIsOfferedAsWhatItsNameSays() {
        #expect(MediaType.of(fileName: "IMG_2041.JPG") == "image/jpeg", "any case: a phone's camera names it so")
        #expect(MediaType.of(fileName: "clip.mov") == "video/quicktime")
        #expect(MediaType.of(fileName: "report.v2.pdf") == "application/pdf", "the last extension")
        #expect(MediaType.of(fileName: "notes.txt") == "text/plain")
        for unknown in ["Makefile", ".bashrc", "film.bin", "archive.", "noext"] {
            #expect(MediaType.of(fileName: unknown) == MediaType.unknown, "\(unknown)")
        }
    }
}
