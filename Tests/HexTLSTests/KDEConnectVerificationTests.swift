import HexTLS
import Testing

/// The code both sides show while pairing with a KDE Connect device: the same on both sides,
/// the larger key first (unsigned bytes, a prefix before what it begins), and protocol 8's date
/// covered. The vectors were computed apart, with Python's hashlib.
@Suite(.timeLimit(.minutes(1))) struct KDEConnectVerificationTests {
    private let smaller: [UInt8] = [0x30, 0x59, 1, 2, 3]
    private let larger: [UInt8] = [0x30, 0x59, 1, 2, 4]

    @Test func bothSidesShowTheSameCode() throws {
        let ours = try KDEConnectVerification.code(ownKey: smaller, peerKey: larger, timestamp: nil)
        let theirs = try KDEConnectVerification.code(ownKey: larger, peerKey: smaller, timestamp: nil)
        #expect(ours == theirs && ours == "CA2934E8")
    }

    @Test func protocol8sDateIsCovered() throws {
        let dated = try KDEConnectVerification.code(ownKey: smaller, peerKey: larger, timestamp: 1_764_198_000)
        #expect(dated == "21783F3D")
    }

    @Test func aKeyThatIsAPrefixOfTheOtherComesSecond() throws {
        let prefix = Array(smaller.dropLast())
        #expect(try KDEConnectVerification.code(ownKey: prefix, peerKey: smaller, timestamp: nil) == "980048F3")
    }
}
