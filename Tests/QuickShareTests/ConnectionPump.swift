import QuickShareCore

/// Runs a sender's and a receiver's machines against each other in memory: every frame one sends
/// is given to the other, until neither has anything left to send. What else they did is kept.
struct ConnectionPump {
    var sender: OutboundConnection
    var receiver: InboundConnection
    var senderActions: [OutboundConnection.Action] = []
    var receiverActions: [InboundConnection.Action] = []
    /// Frames in flight, each to the side named.
    private var toReceiver: [[UInt8]] = []
    private var toSender: [[UInt8]] = []

    init(share: OutgoingShare, name: String = "Pixel 8") throws {
        sender = OutboundConnection(share: share, keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        receiver = InboundConnection(keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        let info = EndpointInfo(deviceType: .phone, name: name, random: try SecureRandom.bytes(16))
        take(sender.opening(endpointID: Array("ABCD".utf8), info: info))
    }

    /// Delivers frames both ways until none is left (at most `limit`, so a loop cannot run on).
    mutating func run(limit: Int = 10_000) {
        var moved = 0
        while moved < limit, !toReceiver.isEmpty || !toSender.isEmpty {
            if !toReceiver.isEmpty { take(receiver.receive(toReceiver.removeFirst())) }
            if !toSender.isEmpty { take(sender.receive(toSender.removeFirst())) }
            moved += 1
        }
    }

    mutating func answer(accept: Bool) {
        take(receiver.answer(accept: accept))
        run()
    }

    /// Sends every file of the share in chunks of `chunk` bytes, its bytes made by `content`.
    mutating func sendFiles(_ share: OutgoingShare, chunk: Int, content: (Int) -> [UInt8]) {
        for (index, file) in share.files.enumerated() {
            let bytes = content(index)
            var offset = 0
            repeat {
                let end = min(offset + chunk, bytes.count)
                take(sender.fileChunk(index: index, bytes: Array(bytes[offset..<end]), last: end == Int(file.size)))
                offset = end
                run()
            } while offset < bytes.count
        }
    }

    var offer: ShareOffer? {
        receiverActions.lazy.compactMap { action -> ShareOffer? in
            if case .ask(let offer) = action { return offer }
            return nil
        }.first
    }

    var deliveries: [ShareDelivery] {
        receiverActions.compactMap { action in
            if case .deliver(let delivery) = action { return delivery }
            return nil
        }
    }

    private mutating func take(_ actions: [OutboundConnection.Action]) {
        for action in actions {
            if case .send(let frame) = action { toReceiver.append(frame) } else { senderActions.append(action) }
        }
    }

    private mutating func take(_ actions: [InboundConnection.Action]) {
        for action in actions {
            if case .send(let frame) = action { toSender.append(frame) } else { receiverActions.append(action) }
        }
    }
}
