/// Where an HTTP head ends in bytes as they arrive, for the request and the response readers.
enum HTTPHeadEnd {
    /// The end of the head (before its blank line) and the start of the body in `buffer`, once the
    /// blank line (CRLF CRLF, or bare LF LF) has arrived; the search starts at `start`, three bytes
    /// back from where the last one ended (`scanned`), so that bytes are looked at about once.
    static func find(in buffer: [UInt8], from start: Int, scanned: inout Int) -> (headEnd: Int, bodyStart: Int)? {
        var index = max(start, scanned - 3)
        defer { scanned = buffer.count }
        while index < buffer.count {
            if buffer[index] == .lineFeed {
                let next = index + 1
                if next < buffer.count && buffer[next] == .lineFeed { return (index, next + 1) }
                if next + 1 < buffer.count && buffer[next] == .carriageReturn && buffer[next + 1] == .lineFeed {
                    return (index, next + 2)
                }
            }
            index += 1
        }
        return nil
    }
}
