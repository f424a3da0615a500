import HexEngine
import HexKit
import LocalSendCore
import Testing

/// LocalSend's receive rules, event by event on a fake clock: one session, tokens, one address.
@Suite(.timeLimit(.minutes(1))) struct LocalSendReceptionTests {
    typealias Reception = LocalSendReception<String, String>
    private let start = ContinuousClock.now
    private static let note = LocalSendFile(id: "n", fileName: "note.txt", size: 5, fileType: "text/plain")
    private static let photo = LocalSendFile(id: "p", fileName: "a.jpg", size: 9, fileType: "image/jpeg")

    /// Why `attempt` was refused; nil when it was not.
    private func refusal(
        _ reception: inout Reception, _ attempt: (inout Reception) throws -> Void
    ) -> Reception.Refusal? {
        do {
            try attempt(&reception)
            return nil
        } catch {
            return error as? Reception.Refusal
        }
    }

    @Test func aSessionTakesEachFileOnceWithItsTokenFromItsAddress() throws {
        var reception = Reception()
        _ = try reception.prepare(
            id: "s1", files: [("t1", Self.note), ("t2", Self.photo)], from: "10.0.0.7", sender: "Pixel", at: start)
        let wrongToken = refusal(&reception) {
            _ = try $0.upload(session: "s1", file: "n", token: "t2", from: "10.0.0.7", at: start)
        }
        #expect(wrongToken == .forbidden("no such file, or a wrong token"))
        let otherAddress = refusal(&reception) {
            _ = try $0.upload(session: "s1", file: "n", token: "t1", from: "10.0.0.8", at: start)
        }
        #expect(otherAddress == .forbidden("uploads come from the address that prepared them"))
        let first = try reception.upload(session: "s1", file: "n", token: "t1", from: "10.0.0.7", at: start)
        #expect(first.file == Self.note && first.sender == "Pixel", "the file, and who prepared it")
        let again = refusal(&reception) {
            _ = try $0.upload(session: "s1", file: "n", token: "t1", from: "10.0.0.7", at: start)
        }
        #expect(again != nil, "a file is uploaded once")
        _ = try reception.upload(session: "s1", file: "p", token: "t2", from: "10.0.0.7", at: start)
        #expect(reception.isUploading(session: "s1", file: "p") && !reception.isUploading(session: "s1", file: "x"))
        let noteDone = reception.finished(session: "s1", file: "n", at: start)
        #expect(!noteDone && reception.session != nil, "the photo's bytes are still coming")
        let photoDone = reception.finished(session: "s1", file: "p", at: start)
        #expect(photoDone && reception.session == nil, "the last file done ends the session")
    }

    /// Bytes that are not the SHA-256 offered: the file may come again with its token, three
    /// uploads in all, as LocalSend 1.18's receiver allows (its sender then retries).
    @Test func aChecksumMismatchMayBeUploadedAgainTwice() throws {
        var reception = Reception()
        _ = try reception.prepare(id: "s1", files: [("t1", Self.photo)], from: "10.0.0.7", sender: "Pixel", at: start)
        for attempt in 1...LocalSendAnswer.maximumUploads {
            _ = try reception.upload(session: "s1", file: "p", token: "t1", from: "10.0.0.7", at: start)
            let whileUnderWay = refusal(&reception) {
                _ = try $0.upload(session: "s1", file: "p", token: "t1", from: "10.0.0.7", at: start)
            }
            #expect(whileUnderWay != nil, "one upload of a file at a time")
            let again = reception.mismatched(session: "s1", file: "p", at: start)
            #expect(again == (attempt < LocalSendAnswer.maximumUploads), "attempt \(attempt)")
        }
        #expect(reception.finished(session: "s1", file: "p", at: start) && reception.session == nil)
        let fourth = refusal(&reception) {
            _ = try $0.upload(session: "s1", file: "p", token: "t1", from: "10.0.0.7", at: start)
        }
        #expect(fourth == .forbidden("no such session"))
    }

    @Test func aLongUploadKeepsItsSessionAndACancelStopsIt() throws {
        var reception = Reception(idleLimit: .seconds(60))
        _ = try reception.prepare(
            id: "s1", files: [("t1", Self.photo), ("t2", Self.note)], from: "a", sender: "A", at: start)
        _ = try reception.upload(session: "s1", file: "p", token: "t1", from: "a", at: start)
        let busy = refusal(&reception) {
            _ = try $0.prepare(id: "s2", files: [("t", Self.note)], from: "b", sender: "B", at: start + .seconds(600))
        }
        #expect(busy == .busy, "a file still coming after ten minutes is no idle session")
        let photoDone = reception.finished(session: "s1", file: "p", at: start + .seconds(601))
        #expect(!photoDone, "the note is still to come")
        let cancelled = reception.cancel(session: "s1", from: "a")
        #expect(cancelled && !reception.isUploading(session: "s1", file: "p"))
        let endedAgain = reception.finished(session: "s1", file: "n", at: start + .seconds(602))
        #expect(!endedAgain, "nothing ends twice")
    }

    @Test func oneSessionAtATimeUntilItEndsOrIdles() throws {
        var reception = Reception(idleLimit: .seconds(60))
        _ = try reception.prepare(id: "s1", files: [("t", Self.note)], from: "a", sender: "A", at: start)
        let busy = refusal(&reception) {
            _ = try $0.prepare(id: "s2", files: [("t", Self.photo)], from: "b", sender: "B", at: start + .seconds(59))
        }
        #expect(busy == .busy)
        #expect(Reception.Refusal.busy.status == 409 && Reception.Refusal.forbidden("").status == 403)
        let cancelledByAnother = reception.cancel(session: "s1", from: "b")
        #expect(!cancelledByAnother, "another address cannot cancel it")
        let cancelled = reception.cancel(session: "s1", from: "a")
        #expect(cancelled)
        _ = try reception.prepare(id: "s3", files: [("t", Self.note)], from: "b", sender: "B", at: start + .seconds(61))
        let taken = try reception.prepare(
            id: "s4", files: [("t", Self.note)], from: "c", sender: "C", at: start + .seconds(122))
        #expect(taken.id == "s4", "a session idle for a minute gave way")
        let ended = refusal(&reception) {
            _ = try $0.upload(session: "s3", file: "n", token: "t", from: "b", at: start + .seconds(122))
        }
        #expect(ended == .forbidden("no such session"))
    }

    @Test func aSessionNothingComesForEndsWhenAskedAfterItsIdleLimit() throws {
        var reception = Reception(idleLimit: .seconds(60))
        _ = try reception.prepare(id: "s1", files: [("t", Self.photo)], from: "a", sender: "A", at: start)
        reception.expire(at: start + .seconds(59))
        #expect(reception.session != nil)
        reception.expire(at: start + .seconds(60))
        #expect(reception.session == nil)
    }
}
