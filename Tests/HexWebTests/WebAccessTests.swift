import HexWeb
import Testing

@Suite(.timeLimit(.minutes(5))) struct WebAccessTests {
    private let token = String(repeating: "ab", count: 32)
    private var access: WebAccess { WebAccess(token: token, host: "127.0.0.1", port: 18_522) }

    private func request(_ headers: [(String, String)], post: Bool = false, query: [String: String] = [:])
        -> HTTPRequest
    {
        let (method, path) = post ? ("POST", "/control") : ("GET", "/")
        return HTTPRequest(method: method, path: path, query: query, headers: HTTPHeaders(headers))
    }

    private func code(_ decision: WebAccess.Decision) -> Int? {
        if case .refused(let status, _) = decision { return status.code }
        return nil
    }

    @Test func aForeignHostIsMisdirectedWhateverItCarries() {
        let bearer = ("Authorization", "Bearer \(token)")
        #expect(code(access.decide(request([("Host", "evil.example:18522"), bearer]))) == 421)
        #expect(code(access.decide(request([("Host", "127.0.0.1:80"), bearer]))) == 421)
        #expect(code(access.decide(request([bearer]))) == 421, "no Host")
        #expect(access.decide(request([("Host", "LOCALHOST:18522"), bearer])) == .allowed(.bearer))
    }

    @Test func theTokenInTheAddressIsALoginOnlyWhenRight() {
        let host = ("Host", "127.0.0.1:18522")
        #expect(access.decide(request([host], query: ["token": token])) == .login)
        #expect(code(access.decide(request([host], query: ["token": token + "0"]))) == 401)
        #expect(code(access.decide(request([host], query: ["token": ""]))) == 401)
        #expect(code(access.decide(request([host]))) == 401, "no credential")
        #expect(access.sessionCookie.contains("HttpOnly") && access.sessionCookie.contains("SameSite=Strict"))
    }

    @Test func theCookieOfThisPortIsACredentialAndAnotherPortsIsNot() {
        let host = ("Host", "127.0.0.1:18522")
        #expect(access.decide(request([host, ("Cookie", "a=b; hexd_session_18522=\(token)")])) == .allowed(.cookie))
        #expect(code(access.decide(request([host, ("Cookie", "hexd_session_18523=\(token)")]))) == 401)
        #expect(code(access.decide(request([host, ("Authorization", "Bearer nope")]))) == 401)
    }

    @Test func aPostNeedsThePagesOriginWithACookieAndAnyOriginSentMustBeThePages() {
        let host = ("Host", "127.0.0.1:18522")
        let cookie = ("Cookie", "hexd_session_18522=\(token)")
        let bearer = ("Authorization", "Bearer \(token)")
        #expect(code(access.decide(request([host, cookie], post: true))) == 403)
        #expect(code(access.decide(request([host, cookie, ("Origin", "http://evil.example")], post: true))) == 403)
        #expect(code(access.decide(request([host, cookie, ("Origin", "null")], post: true))) == 403)
        #expect(
            access.decide(request([host, cookie, ("Origin", "http://127.0.0.1:18522")], post: true))
                == .allowed(.cookie))
        #expect(access.decide(request([host, bearer], post: true)) == .allowed(.bearer), "a script")
        #expect(
            code(access.decide(request([host, bearer, ("Origin", "http://evil.example")], post: true)))
                == 403)
    }
}
