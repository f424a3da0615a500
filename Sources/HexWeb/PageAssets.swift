/// The page's files, compiled into hexd: nothing is loaded from disk or from another origin.
public enum PageAssets {
    public struct Asset: Sendable {
        public let contentType: String
        public let bytes: [UInt8]
    }

    /// Scripts, styles, images and connections from hexd's own origin only; no inline script or
    /// style, no plug-ins, no framing, no form posted elsewhere. Text a peer sent can only ever
    /// be text.
    public static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; "
        + "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// The file served at `path`, if any.
    public static func named(_ path: String) -> Asset? {
        switch path {
        case "/": Asset(contentType: "text/html; charset=utf-8", bytes: Array(PageHTML.text.utf8))
        case "/app.js": Asset(contentType: "text/javascript; charset=utf-8", bytes: Array(PageScript.text.utf8))
        case "/app.css": Asset(contentType: "text/css; charset=utf-8", bytes: Array(PageStyle.text.utf8))
        case "/icon.svg": Asset(contentType: "image/svg+xml", bytes: Array(PageHTML.icon.utf8))
        default: nil
        }
    }
}
