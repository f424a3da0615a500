import Glibc

/// The width help text wraps to: the terminal's, when standard output is one, else `COLUMNS`,
/// else 80; never less than 60.
public func terminalWidth() -> Int {
    var size = winsize()
    if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
        return max(60, Int(size.ws_col))
    }
    if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 { return max(60, columns) }
    return 80
}
