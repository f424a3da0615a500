import Foundation
import HexControl
import HexKit
import Testing

/// A peer's kind is an open set: hexctl reads a kind a newer daemon names that it does not know, and
/// refuses only a name without the form of one.
@Suite(.timeLimit(.minutes(1))) struct PeerInfoKindTests {
    static func peer(kind: PeerKind?) -> PeerInfo {
        PeerInfo(
            uuid: "bluetooth-le:AB12", name: "Watch", versionID: "1", endpoint: "-", addresses: [], legacy: false,
            lastSeen: 1, fingerprint: nil, kind: kind, protocolName: "Bluetooth LE")
    }

    @Test func aKindThisReaderDoesNotKnowIsReadAsItIs() throws {
        let kind = PeerKind(rawValue: "bluetooth-le")
        let line = try ControlCoding.encode(Self.peer(kind: kind))
        let read = try ControlCoding.decode(PeerInfo.self, from: line)
        #expect(read.kind == kind && read.kind?.rawValue == "bluetooth-le" && read == Self.peer(kind: kind))
        #expect(read.uuid.shortPeerID == "bluetooth-le:AB12", "its ID shown by its shape")
    }

    @Test func aKindWithoutTheFormIsRefused() throws {
        let line = String(decoding: try ControlCoding.encode(Self.peer(kind: .hexd)), as: UTF8.self)
        let forged = line.replacingOccurrences(of: #""kind":"hexd""#, with: #""kind":"Not A Kind""#)
        #expect(forged != line)
        #expect(throws: (any Error).self) { try ControlCoding.decode(PeerInfo.self, from: Array(forged.utf8)) }
    }
}
