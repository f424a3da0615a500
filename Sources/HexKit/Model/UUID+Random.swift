extension UUID {
    /// A new random (version 4) UUID, taken from the system's generator.
    ///
    /// Use it where UUIDs are made often (every received hex): on Linux `UUID()` opens, reads
    /// and closes /dev/urandom for every UUID. This costs two `getrandom` calls and no file.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A random (version 4) UUID from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> UUID {
        var words: (UInt64, UInt64) = (generator.next(), generator.next())
        return withUnsafeMutableBytes(of: &words) { bytes in
            // RFC 9562: the version (4) in the high nibble of byte 6, the variant (10) in byte 8.
            bytes[6] = bytes[6] & 0x0F | 0x40
            bytes[8] = bytes[8] & 0x3F | 0x80
            return UUID(uuid: bytes.load(as: uuid_t.self))
        }
    }
}

/// Fast random words for ids that must differ from one another but need not be unguessable,
/// such as the ids of a received hex's links: SplitMix64, seeded once from the system's
/// generator. With `UUID.random()` (two system calls each), the link ids of a 100,000-link hex
/// took a tenth of the time to store it.
public struct SeededRandomGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    /// A generator that gives the same words each time (for tests).
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var word = state
        word = (word ^ (word >> 30)) &* 0xBF58_476D_1CE4_E5B9
        word = (word ^ (word >> 27)) &* 0x94D0_49BB_1331_11EB
        return word ^ (word >> 31)
    }
}
