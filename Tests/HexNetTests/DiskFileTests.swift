import Foundation
import HexHarness
import HexNet
import Testing

@Suite(.timeLimit(.minutes(1))) struct DiskFileTests {
    @Test func contentsStopAtTheLimitOrTheEnd() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("note.txt")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("hello, world".utf8)))
        let file = try DiskFile.reading(path)
        #expect(try file.contents(upTo: 5) == Array("hello".utf8))
        #expect(try file.contents(upTo: 100) == Array("hello, world".utf8))
        #expect(try file.contents(upTo: 0).isEmpty)
        #expect(throws: DiskFileError.self) { _ = try DiskFile.reading(directory.path) }
    }
}
