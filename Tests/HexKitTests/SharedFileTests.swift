import HexKit
import Testing

/// The pure parts of sharing files peer to peer: the link scheme, the Fetch and FileRange
/// objects, and the names a peer's file may take in a downloads folder.
@Suite(.timeLimit(.minutes(5))) struct SharedFileTests {
    let owner = "792ABB2D-4116-88D5-9BBF-1D8B05F827DF"
    let grant = "b2e01bc68b3a5ba000392401d94a4521"

    @Test func aPeerFileLinkReadsBackAsWritten() throws {
        for name in ["report.pdf", "Q3 report (final).pdf", "naïve 日本.txt", "a/b\\c%20", "100%"] {
            let link = PeerFileLink(ownerID: owner.lowercased(), grant: grant.uppercased(), name: name)
            #expect(link.text.hasPrefix("hexd://\(owner)/f/\(grant)/"))
            #expect(!link.text.dropFirst("hexd://".count).contains(" "))
            let read = try #require(PeerFileLink(link.text), "\(link.text)")
            #expect(read == link && read.name == name)
        }
    }

    @Test func anythingElseIsNoPeerFileLink() {
        let bad = [
            "https://example.com/f/\(grant)/a", "hexd://\(owner)/g/\(grant)/a", "hexd://not-a-uuid/f/\(grant)/a",
            "hexd://\(owner)/f/\(grant.dropLast())/a", "hexd://\(owner)/f/\(grant)x/a", "hexd://\(owner)/f/\(grant)/",
            "hexd://\(owner)/f/\(grant)", "hexd://\(owner)/f/\(grant)/a%2", "hexd://\(owner)/f/\(grant)/a%zz",
            "hexd://\(owner)/f/\(grant)/%FF%FE", "hexd://\(owner)/f/\(grant)/" + String(repeating: "a", count: 5_000),
        ]
        for text in bad { #expect(PeerFileLink(text) == nil, "\(text.prefix(100))") }
    }

    @Test func fetchAndFileRangeObjectsReadBackAndRefuseWhatCannotBe() throws {
        let prefix = String(repeating: "ab", count: 32)
        let fetch = FetchJM(grant: grant, offset: 1_048_576, prefixSHA256: prefix)
        #expect(Envelope.fetch(fetch, versionID: "2.0", messageID: "m").fetch == fetch)
        #expect(FetchJM(FetchJM(grant: grant).raw) == FetchJM(grant: grant))
        let range = FileRangeJM(name: "a.pdf", size: 10, sha256: prefix, offset: 4, length: 6)
        #expect(Envelope.sending(range, messageID: "m", versionID: "2.0").fileRange == range)
        let refused = [
            #"{"grant":"xyz"}"#, #"{"grant":"\#(grant)","offset":-1}"#, #"{"grant":"\#(grant)","offset":5}"#,
            #"{"grant":"\#(grant)","offset":1.5,"prefixSHA256":"\#(prefix)"}"#,
            #"{"grant":"\#(grant)","offset":"5","prefixSHA256":"\#(prefix)"}"#,
            #"{"grant":"\#(grant)","offset":99999999999999999999,"prefixSHA256":"\#(prefix)"}"#,
            #"{"grant":"\#(grant)","offset":5,"prefixSHA256":"abc"}"#, #"[1]"#, #"{"grant":7}"#,
        ]
        for text in refused { #expect(FetchJM(try RawJSON(Array(text.utf8))) == nil, "\(text)") }
        let badRanges = [
            #"{"name":"a","size":10,"sha256":"\#(prefix)","offset":11,"length":0}"#,
            #"{"name":"a","size":10,"sha256":"\#(prefix)","offset":4,"length":7}"#,
            #"{"name":"a","size":-1,"sha256":"\#(prefix)","offset":0,"length":-1}"#,
            #"{"name":"a","size":10,"sha256":"zz","offset":0,"length":10}"#,
            #"{"size":10,"sha256":"\#(prefix)","offset":0,"length":10}"#,
        ]
        for text in badRanges { #expect(FileRangeJM(try RawJSON(Array(text.utf8))) == nil, "\(text)") }
    }

    @Test func hostileNamesBecomeOneSafeComponent() {
        let cases: [(String, String)] = [
            ("../../.bashrc", "bashrc"), ("/etc/passwd", "passwd"), (".hidden", "hidden"), ("...", "file"),
            ("", "file"), ("..", "file"), ("a\\..\\b.txt", "b.txt"), ("CON", "_CON"), ("nul.txt", "_nul.txt"),
            ("com1", "_com1"), ("LPT9.doc", "_LPT9.doc"), ("console.txt", "console.txt"),
            ("in\u{202E}fdp.exe", "infdp.exe"), ("tab\there\n.txt", "tabhere.txt"),
            ("a<b>c:d|e?f*g\".txt", "a_b_c_d_e_f_g_.txt"),
            ("  spaced out.txt. ", "spaced out.txt"), ("report.pdf", "report.pdf"),
        ]
        for (name, safe) in cases { #expect(SafeFileName.make(from: name) == safe, "\(name)") }
        let long = SafeFileName.make(from: String(repeating: "é", count: 10_000) + ".pdf")
        #expect(long.utf8.count <= SafeFileName.maximumBytes && long.hasSuffix(".pdf"))
        #expect(SafeFileName.numbered("report.pdf", 2) == "report (2).pdf")
        #expect(SafeFileName.numbered("README", 1) == "README (1)")
    }

    @Test func grantIDsAreRandomAndWellFormed() {
        let ids = (0..<100).map { _ in GrantID.random() }
        #expect(Set(ids).count == 100 && ids.allSatisfy(GrantID.isWellFormed))
        #expect(!GrantID.isWellFormed(String(repeating: "g", count: 32)))
    }
}
