import HexCommandLine
import HexNet

import Glibc

/// `hexctl open`: the inbox page hexd serves, in the user's browser.
let openCommands = [
    Command("open", summary: "Open the inbox page hexd serves in your browser ($BROWSER, else xdg-open).",
            details: """
                The page is served by hexd on loopback (hexd --web). The URL carries the page's token once: the page
                trades it for a cookie and drops it from the address bar. With --print the URL is printed instead, for
                another browser or a script (which may send the token as 'Authorization: Bearer TOKEN'). Anyone who
                can read the URL can use the page: do not paste it where others see it.
                """,
            options: [Option("print", help: "Print the URL instead of opening it.")]) { invocation in
        let url = try pageURL(invocation.dataDirectory)
        if invocation.arguments.flag("print") || invocation.json {
            return printResult(PageURL(url: url), invocation) { $0.url }
        }
        let browser = browserCommand(invocation.environment)
        try launch(browser + [url])
        return .success
    },
]

private struct PageURL: Encodable {
    let url: String
}

/// The page's address with its token, from the files the daemon writes while it serves the page.
private func pageURL(_ directory: DataDirectory) throws -> String {
    let read = { (path: String) throws -> String? in
        (try PrivateFile.read(path)).map { String(decoding: $0.prefix { $0 != 0x0A }, as: UTF8.self) }
    }
    guard let address = try read(directory.webAddressPath), !address.isEmpty else {
        throw CommandFailure(.unavailable, "hexd serves no page here (\(directory.path)): it is not running, "
                             + "runs with --web off, or found its port taken (its log says so)")
    }
    guard let token = try read(directory.webTokenPath), !token.isEmpty else {
        throw CommandFailure(.failure, "the page's token (\(directory.webTokenPath)) is missing: restart hexd")
    }
    return "http://\(address)/?token=\(token)"
}

/// The first command of `$BROWSER` (a colon-separated list, its words split at spaces), else xdg-open.
private func browserCommand(_ environment: [String: String]) -> [String] {
    let first = environment["BROWSER"]?.split(separator: ":").first
    let words = first?.split(separator: " ").map(String.init) ?? []
    return words.isEmpty ? ["xdg-open"] : words
}

/// Starts `arguments` in a process group of its own (a Ctrl-C meant for the terminal's job does
/// not reach it), without a shell, and does not wait for it: a browser may run long after
/// hexctl has ended.
private func launch(_ arguments: [String]) throws {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)
    var pid = pid_t()
    let words = arguments.map { strdup($0) } + [nil]
    defer { words.forEach { free($0) } }
    let result = posix_spawnp(&pid, arguments[0], nil, &attributes, words, environ)
    guard result == 0 else {
        throw CommandFailure(.failure, "cannot start \(arguments[0]): \(String(cString: strerror(result))); "
                             + "set $BROWSER, or use hexctl open --print")
    }
}
