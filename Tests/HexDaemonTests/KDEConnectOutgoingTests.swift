import Testing

@testable import KDEConnectCarrier

/// The queue other tasks put packets in for a KDE Connect link's reader: a sender waits until its
/// packets are written (or cannot be), the reader is rung, and nothing waits forever once the
/// link ends.
@Suite(.timeLimit(.minutes(2))) struct KDEConnectOutgoingTests {
    @Test func aSenderWaitsUntilTheReaderWroteItsPackets() async {
        let outgoing = KDEConnectOutgoing()
        let sender = Task { await outgoing.write([[1], [2]], timeout: .seconds(60)) }
        // The reader is rung, then takes the batch and says it went.
        await outgoing.bell.wait()
        let batches = outgoing.take()
        #expect(batches.map(\.lines) == [[[1], [2]]])
        batches.first?.done(true)
        #expect(await sender.value)
        #expect(outgoing.take().isEmpty, "taken once")
    }

    @Test func aFailedWriteIsTheSendersToo() async {
        let outgoing = KDEConnectOutgoing()
        let sender = Task { await outgoing.write([[1]], timeout: .seconds(60)) }
        await outgoing.bell.wait()
        outgoing.take().first?.done(false)
        #expect(await sender.value == false)
    }

    @Test func theLinkEndingReleasesEverySenderAndTakesNoMore() async {
        let outgoing = KDEConnectOutgoing()
        let waiting = Task { await outgoing.write([[1]], timeout: .seconds(60)) }
        await outgoing.bell.wait()
        outgoing.close()
        #expect(await waiting.value == false)
        #expect(await outgoing.write([[2]], timeout: .seconds(60)) == false, "closed: nothing is queued")
        #expect(outgoing.take().isEmpty)
    }

    @Test func aFullQueueRefusesAtOnce() async {
        let outgoing = KDEConnectOutgoing()
        let filling = Task {
            await outgoing.write(Array(repeating: [0], count: KDEConnectOutgoing.capacity), timeout: .seconds(60))
        }
        await outgoing.bell.wait()
        #expect(await outgoing.write([[1]], timeout: .seconds(60)) == false, "past the capacity")
        let batches = outgoing.take()
        #expect(batches.count == 1)
        batches.first?.done(true)
        #expect(await filling.value)
    }

    @Test func aBatchNotTakenInTimeIsWithdrawnAndFreesItsRoom() async {
        let outgoing = KDEConnectOutgoing()
        // No reader takes it: the sender hears false once its time is over.
        let late = await outgoing.write(
            Array(repeating: [0], count: KDEConnectOutgoing.capacity), timeout: .milliseconds(50))
        #expect(late == false)
        #expect(outgoing.take().isEmpty, "withdrawn, not left for the reader")
        await outgoing.bell.wait()  // its ring, kept
        let next = Task { await outgoing.write([[1]], timeout: .seconds(60)) }
        await outgoing.bell.wait()
        let batches = outgoing.take()
        #expect(batches.map(\.lines) == [[[1]]], "the room it held is free again")
        batches.first?.done(true)
        #expect(await next.value)
    }
}
