import Foundation
import HexWeb
import Testing

@Suite(.timeLimit(.minutes(5))) struct PageAssetsTests {
    @Test func theFirstScreenIsADataBlockNothingInItCanClose() throws {
        let hostile =
            #"{"status":null,"inbox":[{"summary":{"hexDescription":"#
            + #""</script><script>alert(1)</script> & <!--"}}]}"#
        let document = String(decoding: PageAssets.document(firstScreen: Array(hostile.utf8)), as: UTF8.self)
        let opening = #"<script type="application/json" id="first-screen">"#
        let start = try #require(document.range(of: opening))
        let rest = document[start.upperBound...]
        let end = try #require(rest.range(of: "</script>"))
        let block = rest[..<end.lowerBound]
        #expect(!block.contains("<") && !block.contains(">") && !block.contains("&"))
        #expect(block.contains(#"\u003c/script\u003e\u003cscript\u003ealert(1)"#), "escaped, still JSON")
        #expect(!document.contains("<!--first-screen-->"), "the marker is replaced")
        #expect(document.components(separatedBy: "<script").count == 3, "the page's own script and the block")
    }

    @Test func thePagesFilesAreServedWithTheirTypes() {
        #expect(PageAssets.named("/app.js")?.contentType.hasPrefix("text/javascript") == true)
        #expect(PageAssets.named("/app.css")?.contentType.hasPrefix("text/css") == true)
        #expect(PageAssets.named("/../etc/passwd") == nil && PageAssets.named("/app.js?x") == nil)
        #expect(PageAssets.contentSecurityPolicy.contains("script-src 'self'"))
        #expect(!PageAssets.contentSecurityPolicy.contains("unsafe"))
    }
}
