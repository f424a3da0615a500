/// The page's files, compiled into hexd: nothing is loaded from disk or from another origin.
public enum PageAssets {
    public struct Asset: Sendable {
        public let contentType: String
        public let bytes: [UInt8]
    }

    /// Scripts, styles, images and connections from hexd's own origin only; no inline script or
    /// style, no plug-ins, no framing, no form posted elsewhere. Text a peer sent can only ever
    /// be text.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        + "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// The page's document with its first screen in it: `firstScreen` (a JSON object, the control
    /// API's answers to `status` and the inbox's first page) in a data block the script reads
    /// instead of asking. A data block is never run, and `<`, `>` and `&` are escaped inside it, so
    /// nothing a peer wrote can close it.
    public static func document(firstScreen: [UInt8]) -> [UInt8] {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(firstScreen.count)
        for byte in firstScreen {
            switch byte {
            case UInt8(ascii: "<"): escaped += Array(#"\u003c"#.utf8)
            case UInt8(ascii: ">"): escaped += Array(#"\u003e"#.utf8)
            case UInt8(ascii: "&"): escaped += Array(#"\u0026"#.utf8)
            default: escaped.append(byte)
            }
        }
        let block =
            Array(#"<script type="application/json" id="first-screen">"#.utf8) + escaped
            + Array("</script>".utf8)
        let marker = Array("<!--first-screen-->".utf8)
        let html = Array(PageHTML.text.utf8)
        guard let start = html.firstRange(of: marker) else { return html }
        return Array(html[..<start.lowerBound]) + block + Array(html[start.upperBound...])
    }

    /// The script, style or icon served at `path`, if any (the document is `document(firstScreen:)`).
    public static func named(_ path: String) -> Asset? {
        switch path {
        case "/app.js": Asset(contentType: "text/javascript; charset=utf-8", bytes: Array(PageScript.text.utf8))
        case "/app.css": Asset(contentType: "text/css; charset=utf-8", bytes: Array(PageStyle.text.utf8))
        case "/icon.svg": Asset(contentType: "image/svg+xml", bytes: Array(PageHTML.icon.utf8))
        default: nil
        }
    }
}
