import HexKit

/// `text` kept as raw JSON; the text is the test's own and known to be valid.
func rawJSON(_ text: String) -> RawJSON {
    guard let raw = try? RawJSON(Array(text.utf8)) else { preconditionFailure("not JSON: \(text)") }
    return raw
}
