import HexCommandLine
import HexNet

/// `hexctl open`: the inbox page hexd serves, in the user's browser.
let openCommands = [
    Command(
        "open", summary: "Open the inbox page hexd serves in your browser ($BROWSER, else xdg-open).",
        details: """
            The page is served by hexd on loopback (hexd --web). The browser is given a file in the data
            directory that leads it on to the page's URL, which carries the page's token once: the page trades it
            for a cookie and drops it from the address bar. With --print the URL is printed instead, for another
            browser or a script (which may send the token as 'Authorization: Bearer TOKEN'). Anyone who can read
            the URL can use the page: do not paste it where others see it.
            """,
        options: [Option(.print, help: "Print the URL instead of opening it.")]
    ) { invocation in
        let directory = invocation.dataDirectory
        let url = try pageURL(directory)
        if invocation.arguments.flag(.print) || invocation.json {
            return printResult(PageURL(url: url), invocation) { $0.url }
        }
        // The browser is given a file that leads on to the URL: its command line, which every
        // user of the machine can read, never holds the token.
        let browser = Browser.command(invocation.environment)
        do {
            try await ChildProcess.launch(browser + [directory.webOpenURL])
        } catch {
            throw CommandFailure(.failure, "\(error); set $BROWSER, or use hexctl open --print")
        }
        return .success
    }
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
        throw CommandFailure(
            .unavailable,
            "hexd serves no page here (\(directory.path)): it is not running, "
                + "runs with --web off, or found its port taken (its log says so)")
    }
    guard let token = try read(directory.webTokenPath), !token.isEmpty else {
        throw CommandFailure(.failure, "the page's token (\(directory.webTokenPath)) is missing: restart hexd")
    }
    return "http://\(address)/?token=\(token)"
}
