import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ConnectionTests {
    @Test func aLinkIsOfferedWithThePinBothSidesShowAndArrivesOnceAccepted() throws {
        let share = OutgoingShare(texts: [.init(kind: .url, text: "https://example.com/a")])
        var pump = try ConnectionPump(share: share)
        pump.run()
        let offer = try #require(pump.offer)
        #expect(offer.senderName == "Pixel 8")
        #expect(offer.deviceType == .phone)
        #expect(offer.pin == pump.sender.pin)
        #expect(offer.pin.count == 4)
        #expect(offer.texts.map(\.kind) == [.url])
        #expect(pump.deliveries.isEmpty)
        pump.answer(accept: true)
        #expect(pump.deliveries == [.text(.url, "https://example.com/a")])
        #expect(pump.receiverActions.last == .finish)
        #expect(pump.senderActions == [.delivered])
    }

    @Test func filesArriveInOrderAndWhole() throws {
        let share = OutgoingShare(files: [
            .init(name: "a.jpg", size: 5, mimeType: "image/jpeg"),
            .init(name: "empty.txt", size: 0, mimeType: "text/plain"),
            .init(name: "b.bin", size: 7, mimeType: "application/octet-stream"),
        ])
        var pump = try ConnectionPump(share: share)
        pump.run()
        #expect(pump.offer?.files.map(\.name) == ["a.jpg", "empty.txt", "b.bin"])
        #expect(pump.offer?.fileBytes == 12)
        pump.answer(accept: true)
        #expect(pump.senderActions == [.sendFiles])
        pump.sendFiles(share, chunk: 3) { index in [[1, 2, 3, 4, 5], [], [6, 7, 8, 9, 10, 11, 12]][index] }
        #expect(
            pump.deliveries == [
                .fileBytes(index: 0, offset: 0, bytes: [1, 2, 3]), .fileBytes(index: 0, offset: 3, bytes: [4, 5]),
                .fileEnded(index: 0), .fileEnded(index: 1),
                .fileBytes(index: 2, offset: 0, bytes: [6, 7, 8]), .fileBytes(index: 2, offset: 3, bytes: [9, 10, 11]),
                .fileBytes(index: 2, offset: 6, bytes: [12]), .fileEnded(index: 2),
            ])
        #expect(pump.receiverActions.last == .finish)
        #expect(pump.senderActions == [.sendFiles, .delivered])
    }

    @Test func aDeclinedOfferTellsTheSenderAndDeliversNothing() throws {
        var pump = try ConnectionPump(share: OutgoingShare(texts: [.init(kind: .text, text: "hello")]))
        pump.run()
        pump.answer(accept: false)
        #expect(pump.deliveries.isEmpty)
        #expect(pump.senderActions.first == .declined(.reject))
        #expect(pump.receiverActions.last == .close(reason: "the offer was declined"))
    }

    @Test func keepAlivesAreAnsweredOnceTheChannelIsSecure() throws {
        var pump = try ConnectionPump(share: OutgoingShare(texts: [.init(kind: .text, text: "hello")]))
        #expect(pump.receiver.keepAlive().isEmpty)
        pump.run()
        #expect(pump.offer != nil, "the receiver asks, and keeps the connection while it waits")
        let keepAlive = pump.sender.keepAlive()
        guard case .send(let frame)? = keepAlive.first else {
            Issue.record("no keep-alive: \(keepAlive)")
            return
        }
        guard case .send? = pump.receiver.receive(frame).first else {
            Issue.record("the keep-alive was not answered")
            return
        }
    }
}
