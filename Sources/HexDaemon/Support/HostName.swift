import Glibc

/// The machine's host name without its domain: the display name a first start takes when no
/// `--name` is given.
enum HostName {
    /// Nil when the system gives none, or an empty one.
    static var current: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let short = String(decoding: bytes, as: UTF8.self).split(separator: ".").first.map(String.init) ?? ""
        return short.isEmpty ? nil : short
    }
}
