import HexCarrier
import HexEngine
import HexKit
import HexNet

/// A LocalSend device's offer that the person may let in (`OfferConsent`): its request is
/// held while the person is asked (`hexctl peers`, `hexctl watch`, a notification, the page), and
/// `hexctl pair --accept` (or `--decline`) answers it; a yes pairs the device. A device that gives
/// up meanwhile (LocalSend 1.18 closes its connection, or posts `/cancel` without a session:
/// `send_provider.dart`, `core/src/http/server/v2.rs`) withdraws it: no question is left.
extension LocalSendCarrier {
    /// Asks the person whether `sender` may send `what`, and waits for the answer, at most
    /// `OfferConsent.wait`, or until the task is cancelled (the sender closed its connection):
    /// nil when they said yes (the device is paired then), else why not.
    nonisolated func askPerson(about sender: Sender, offering what: String) async -> String? {
        guard let id = sender.id, case .key(let certificate, _) = sender.proof else {
            return "it showed no certificate, so it cannot be let in"
        }
        // A sender gone already is asked about no more.
        guard !Task.isCancelled else { return "the device gave up waiting" }
        let outcome: OfferDesk<(certificate: String, address: String)>.Outcome
        do {
            outcome = try await offers.ask(
                id, named: sender.alias, offering: what, keeping: (certificate, sender.address)
            ) { _ in
                await self.tellPerson(about: sender, id: id, offering: what)
            }
        } catch {
            let why = error == .full ? "as many offers wait for the person as may" : "an offer of it waits already"
            logger.limited(
                "localsend consent", .info, "\(sender.alias.clipped(toUTF8: 80)) (\(id.shortPeerID ?? id)): \(why)")
            return why
        }
        if Task.isCancelled, outcome == .withdrawn {
            logger.info(
                "\(sender.alias.clipped(toUTF8: 80)) withdrew its offer (it closed its connection): \(what)")
        }
        if Task.isCancelled || outcome == .withdrawn { return "the device gave up waiting" }
        return outcome == .accepted ? nil : "the person at hexd did not let it in"
    }

    /// The device at `address` cancels the offer it has waiting (`/cancel` without a session, as
    /// LocalSend's senders cancel a `prepare-upload` not yet answered); nothing when it has none.
    func cancelWaitingOffer(from address: IPAddress) {
        guard let number = offers.extras.first(where: { $0.value.address == address.description })?.key,
            let request = offers.withdraw(number)
        else { return }
        logger.info("\(request.name.clipped(toUTF8: 80)) withdrew its offer (it cancelled): \(request.what)")
    }

    /// Tells the person of an offer waiting: the log, a `pairRequested` event, the arrivals (a
    /// notification).
    private func tellPerson(about sender: Sender, id: String, offering what: String) async {
        let offer = Self.waiting(what)
        logger.info(
            "\(sender.alias.clipped(toUTF8: 80)) (\(id.shortPeerID ?? id), \(sender.remote)) wants to send \(what): "
                + "waiting for hexctl pair --accept \(id.prefix(18))")
        await events.publish(
            .pairRequested, peerUUID: id, peer: sender.alias, versionID: "LocalSend " + sender.version,
            message: offer.eventMessage)
        intake.offerWaiting(name: sender.alias, key: id, offer: offer)
    }

    /// The person's answer to the offer the device `id` has waiting: a yes pairs the device with
    /// the certificate it showed, then lets the offer in.
    /// - Returns: the device's name, what it offered, and the certificate now paired (nil for a no).
    /// - Throws: `LookupError.noPairing` when no offer of the device waits; a store error.
    private func answerPerson(_ id: String, yes: Bool) async throws
        -> (name: String, what: String, certificate: String?)
    {
        guard let answer = offers.answer(id) else { throw LookupError.noPairing(id) }
        var paired: String?
        if yes {
            do {
                _ = try await intake.store.pair(peer: id, fingerprint: answer.extra.certificate)
                paired = answer.extra.certificate
            } catch {
                answer.reply(false)
                throw error
            }
        }
        logger.info("\(yes ? "accepted" : "declined") the offer of \(id.shortPeerID ?? id): \(answer.request.what)")
        answer.reply(paired != nil)
        return (answer.request.name, answer.request.what, paired)
    }

    /// The offer waiting that `text` names, as a device is named (`DeviceNaming`): by the device's ID,
    /// its name, or a prefix of its ID or fingerprint.
    func offerWaiting(matching text: String) -> OfferConsent<String>.Request? {
        DeviceNaming.device(named: text, among: offers.waiting, forms: Self.idForms, id: \.key, name: \.name)
    }

    /// The offers waiting, each with the address it came from (a device may offer before hexd
    /// heard its announcement, or without one: it is listed by its offer then).
    var offersWaiting: [(request: OfferConsent<String>.Request, address: String)] {
        let extras = offers.extras
        return offers.waiting.map { ($0, extras[$0.number]?.address ?? "") }
    }
}

/// The person answers a device's offer waiting (`hexctl pair --accept` or `--decline`): hexd asks
/// a LocalSend device nothing, and has no pairing with one to end but the certificate it keeps.
extension LocalSendCarrier: TrustingCarrier {
    package func trustSubject(named text: String, for step: TrustStep) -> String? {
        guard step != .request else { return nil }
        return offerWaiting(matching: text)?.key
    }

    package func trust(_ step: TrustStep, _ peerID: String) async throws -> TrustOutcome {
        let answered = try await answerPerson(peerID, yes: step != .decline)
        return TrustOutcome(
            peerID: peerID, name: answered.name, key: answered.certificate,
            trust: answered.certificate == nil ? nil : .paired,
            offer: answered.what, accepted: answered.certificate != nil)
    }

    /// A LocalSend device's pairing is the certificate kept in the store, which hexd's own
    /// unpairing ends: the device is told nothing.
    package func unpair(_ peerID: String, label: String) -> TrustOutcome? { nil }
}

extension LocalSendCarrier {
    /// An offer of `what` as the person is told of it: taking it pins the device's certificate, so its
    /// later offers come in without asking.
    static func waiting(_ what: String) -> WaitingOffer {
        WaitingOffer(what, via: name, acceptingPairs: true)
    }
}
