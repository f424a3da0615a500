/// The Bluetooth LE advertisement a would-be Quick Share sender broadcasts to wake phones nearby:
/// service data for the 16-bit service UUID 0xFE2C (Google's), starting `fc 12 8e 01 42`, nine zero
/// bytes, then ten random ones (rquickshare `hdl/blea.rs`, 24 bytes; pyquickshare `mdns/send.py` sends
/// nine random). A broadcast, with no service UUID list: 28 bytes of advertising data, within the 31 a
/// legacy advertisement holds.
public struct NudgeAdvertisement: Sendable, Equatable {
    /// 0xFE2C in the 128-bit form Bluetooth's base UUID gives it.
    public static let serviceUUID = "0000fe2c-0000-1000-8000-00805f9b34fb"
    static let prefix: [UInt8] = [0xFC, 0x12, 0x8E, 0x01, 0x42] + Array(repeating: 0, count: 9)
    public static let randomBytes = 10

    public let serviceData: [UInt8]

    /// The advertisement with `random` as its last bytes (only the first `randomBytes` are used;
    /// fewer are padded with zeros).
    public init(random: [UInt8]) {
        let tail = Array(random.prefix(Self.randomBytes))
        serviceData = Self.prefix + tail + Array(repeating: 0, count: Self.randomBytes - tail.count)
    }
}
