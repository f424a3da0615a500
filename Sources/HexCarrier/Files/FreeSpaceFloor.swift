import HexKit

/// A floor of free space on the data directory's disk: a size, a share of the disk, or the
/// larger or smaller of two (`--min-free`, `--min-free-hard`).
public indirect enum FreeSpaceFloor: Sendable, Hashable, CustomStringConvertible {
    case bytes(Int)
    /// A share of the disk's size, from 0 to 100.
    case percent(Double)
    case larger(FreeSpaceFloor, FreeSpaceFloor)
    case smaller(FreeSpaceFloor, FreeSpaceFloor)

    /// The floor on a disk of `size` bytes.
    public func bytes(ofDiskSize size: Int) -> Int {
        switch self {
        case .bytes(let bytes): bytes
        case .percent(let percent): Int(Double(max(size, 0)) * percent / 100)
        case .larger(let one, let other): max(one.bytes(ofDiskSize: size), other.bytes(ofDiskSize: size))
        case .smaller(let one, let other): min(one.bytes(ofDiskSize: size), other.bytes(ofDiskSize: size))
        }
    }

    /// `256MiB` (any size `ByteCount` reads) or `2%` (0 to 100, decimals allowed); nil otherwise.
    public static func parse(_ text: String) -> FreeSpaceFloor? {
        let text = text.trimmed
        guard text.hasSuffix("%") else { return ByteCount.parse(text).map(Self.bytes) }
        guard let percent = Double(text.dropLast().trimmed), (0...100).contains(percent) else { return nil }
        return .percent(percent)
    }

    public var description: String {
        switch self {
        case .bytes(let bytes): ByteCount.text(bytes)
        case .percent(let percent): "\(percent.formatted) %"
        case .larger(let one, let other): "the larger of \(one) and \(other)"
        case .smaller(let one, let other): "the smaller of \(one) and \(other)"
        }
    }
}

extension Double {
    /// `2` for 2.0, `0.5` for 0.5.
    fileprivate var formatted: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}
