import HexCarrier
import HexEngine
import HexKit
import QuickShareCore

/// A phone's offer of files waits for the person (`OfferConsent`): its connection is held, with
/// keep-alives, while the person is asked (`hexctl peers`, `hexctl watch`, a notification, the
/// page), and `hexctl pair --accept NAME` (or `--decline`) answers it. Both screens show the same
/// PIN, so the person can tell the phone in front of them from another. Nothing is paired: Quick
/// Share has no identity to pair.
extension QuickShareCarrier {
    /// Asks the person whether the sender of `offer` may send its files, and waits for the answer, at
    /// most `OfferConsent.wait`, or until the task is cancelled (the phone closed its connection).
    nonisolated func askPerson(about offer: ShareOffer, key: String) async -> Bool {
        guard !Task.isCancelled else { return false }
        let name = offer.senderName ?? "A Quick Share device"
        let what = Self.describe(offer)
        let outcome: OfferDesk<Void>.Outcome
        do {
            outcome = try await offers.ask(key, named: name, offering: what, keeping: ()) { _ in
                await self.tellPerson(name: name, key: key, what: what)
            }
        } catch {
            logger.limited(
                "quickshare consent", .info, "Quick Share: \(name.clipped(toUTF8: 80)): too many offers wait")
            return false
        }
        if outcome == .withdrawn {
            logger.info("Quick Share: \(name.clipped(toUTF8: 80)) withdrew its offer: \(what)")
        }
        return outcome == .accepted && !Task.isCancelled
    }

    /// What an offer holds, as the person reads it ("2 files, 3.1 MiB (PIN 1234)").
    static func describe(_ offer: ShareOffer) -> String {
        // The name as it would land: a sender's name may hold terminal escapes, which hexctl would print.
        let files =
            offer.files.count == 1
            ? SafeFileName.make(from: offer.files.first?.name ?? "").clipped(toUTF8: 80) : "\(offer.files.count) files"
        return "\(files), \(ByteCount.text(Int(clamping: offer.fileBytes))) (PIN \(offer.pin))"
    }

    /// Tells the person of an offer of `what` waiting: the log, a `pairRequested` event, the arrivals
    /// (a notification).
    private func tellPerson(name: String, key: String, what: String) async {
        let offer = Self.waiting(what)
        logger.info(
            "Quick Share: \(name.clipped(toUTF8: 80)) wants to send \(what): waiting for hexctl pair --accept "
                + "\"\(name.clipped(toUTF8: 80))\"")
        await events.publish(
            .pairRequested, peerUUID: key, peer: name, versionID: "Quick Share",
            message: offer.eventMessage)
        intake.offerWaiting(name: name, key: key, offer: offer)
    }

    /// The offers waiting.
    var offersWaiting: [OfferConsent<String>.Request] { offers.waiting }

    /// The offer waiting that `text` names, as a device is named (`DeviceNaming`): its key, or the
    /// sender's name when one offer alone has it.
    func offerWaiting(matching text: String) -> OfferConsent<String>.Request? {
        DeviceNaming.device(named: text, among: offers.waiting, forms: [], id: \.key, name: \.name)
    }

    /// The person's answer to the offer `key`.
    /// - Returns: the sender's name and what it offered.
    /// - Throws: `LookupError.noPairing` when no such offer waits.
    func answerPerson(_ key: String, yes: Bool) throws -> (name: String, what: String) {
        guard let answer = offers.answer(key) else { throw LookupError.noPairing(key) }
        let request = answer.request
        logger.info("Quick Share: \(yes ? "accepted" : "declined") the offer of \(request.name): \(request.what)")
        answer.reply(yes)
        return (request.name, request.what)
    }
}

/// The person answers a phone's offer of files (`hexctl pair --accept` or `--decline`): Quick Share
/// has no pairing to ask for or to end.
extension QuickShareCarrier: TrustingCarrier {
    package func trustSubject(named text: String, for step: TrustStep) -> String? {
        guard step != .request else { return nil }
        return offerWaiting(matching: text)?.key
    }

    package func trust(_ step: TrustStep, _ peerID: String) throws -> TrustOutcome {
        let answered = try answerPerson(peerID, yes: step != .decline)
        return TrustOutcome(
            peerID: peerID, name: answered.name, key: nil, trust: nil, offer: answered.what,
            accepted: step != .decline)
    }

    package func unpair(_ peerID: String, label: String) -> TrustOutcome? { nil }
}

extension QuickShareCarrier {
    /// An offer of `what` (its PIN in it) as the person is told of it: both screens show the PIN, and
    /// taking it takes this offer alone, as Quick Share has no identity to pin.
    static func waiting(_ what: String) -> WaitingOffer {
        WaitingOffer(what, via: name, check: "its screen shows the same PIN", acceptingPairs: false)
    }
}
