/// Who may use the page, decided from a request alone (a pure function of the request and the
/// daemon's token), before any route runs:
///
/// 1. A `Host` other than the names the page is served under is answered 421: a DNS-rebinding
///    page at `evil.example` that resolves to 127.0.0.1 never reaches a route.
/// 2. `GET /?token=TOKEN` with the right token is a login: the answer sets the session cookie and
///    sends the browser on to `/` (a same-site navigation, so the cookie goes with it), so the
///    token leaves the address bar.
/// 3. Every other request needs the token, in the session cookie or as
///    `Authorization: Bearer TOKEN` (for scripts): 401 without it.
/// 4. A POST (the only method that changes anything) carrying the cookie must carry an `Origin`
///    that is the page's own: 403 otherwise, so another site cannot make the browser act. A
///    bearer token is never sent by a browser on its own, so a script needs no `Origin`; but an
///    `Origin` that is sent must be the page's.
public struct WebAccess: Sendable {
    /// What a request proved.
    public enum Credential: Sendable, Equatable {
        case cookie
        case bearer
    }

    public enum Decision: Sendable, Equatable {
        case allowed(Credential)
        /// The right token in the address: set the cookie and send the browser on to `/`.
        case login
        case refused(HTTPStatus, String)
    }

    private let token: [UInt8]
    /// The `host:port` values the page answers to: its address, and `localhost` for 127.0.0.1.
    public let authorities: Set<String>
    /// The cookie's name carries the port: cookies are shared by every port of a host, and two
    /// daemons on one machine must not overwrite each other's session.
    public let cookieName: String

    /// - Parameters:
    ///   - host: the address served, `127.0.0.1` for example.
    public init(token: String, host: String, port: UInt16) {
        self.token = Array(token.utf8)
        var authorities: Set<String> = ["\(host):\(port)"]
        if host == "127.0.0.1" { authorities.insert("localhost:\(port)") }
        self.authorities = authorities
        cookieName = "hexd_session_\(port)"
    }

    public func decide(_ request: HTTPRequest) -> Decision {
        guard let host = request.headers["host"], authorities.contains(host.lowercased()) else {
            let served = authorities.sorted().first ?? ""
            return .refused(.misdirectedRequest, "this page is served as http://\(served)/ only")
        }
        if request.method == "GET" && request.path == "/", let offered = request.query["token"] {
            return matches(offered)
                ? .login
                : .refused(.unauthorized, "that token is not this daemon's: run hexctl open")
        }
        guard let credential = credential(of: request) else {
            return .refused(.unauthorized, "no valid session: open the page with hexctl open")
        }
        if request.method == "POST" {
            if let origin = request.headers["origin"] {
                let prefix = "http://"
                let authority = String(origin.dropFirst(prefix.count)).lowercased()
                guard origin.hasPrefix(prefix), authorities.contains(authority)
                else { return .refused(.forbidden, "a request from another origin (\(origin.prefix(200))) is refused") }
            } else if credential == .cookie {
                return .refused(.forbidden, "a POST with a session cookie must carry the page's Origin")
            }
        }
        return .allowed(credential)
    }

    /// The `Set-Cookie` value that keeps a session: unreadable to scripts, never sent by other sites.
    public var sessionCookie: String {
        "\(cookieName)=\(String(decoding: token, as: UTF8.self)); Path=/; HttpOnly; SameSite=Strict"
    }

    private func credential(of request: HTTPRequest) -> Credential? {
        if let authorization = request.headers["authorization"] {
            let scheme = "bearer "
            if authorization.lowercased().hasPrefix(scheme), matches(String(authorization.dropFirst(scheme.count))) {
                return .bearer
            }
        }
        for field in request.headers.fields where field.name == "cookie" {
            for pair in field.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingSpaces == cookieName else { continue }
                if matches(String(parts[1].trimmingSpaces)) { return .cookie }
            }
        }
        return nil
    }

    /// Compares in time that depends on the lengths only, not on where the first difference is.
    private func matches(_ offered: String) -> Bool {
        let bytes = Array(offered.utf8)
        guard bytes.count == token.count, !token.isEmpty else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(bytes, token) { difference |= left ^ right }
        return difference == 0
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
