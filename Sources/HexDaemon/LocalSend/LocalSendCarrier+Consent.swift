import HexEngine
import HexKit

/// A LocalSend device's offer that the person may let in (`LocalSendConsent`): its request is
/// held while the person is asked (`hexctl peers`, `hexctl watch`, a notification, the page), and
/// `hexctl pair --accept` (or `--decline`) answers it; a yes pairs the device.
extension LocalSendCarrier {
    /// Asks the person whether `sender` may send `what`, and waits for the answer, at most
    /// `LocalSendConsent.wait`; true when they said yes (the device is paired then).
    func askPerson(about sender: Sender, offering what: String) async -> Bool {
        guard let id = sender.id, case .key(let certificate, _) = sender.proof else { return false }
        let request: LocalSendConsent<String>.Request
        do {
            request = try consent.open(id, named: sender.alias, offering: what, at: .now)
        } catch {
            logger.limited(
                "localsend consent", .info,
                "\(sender.alias.clipped(toUTF8: 80)) (\(Intake.short(id))) cannot wait for a yes: "
                    + (error == .full ? "as many offers wait as may" : "it has an offer waiting"))
            return false
        }
        consentCertificates[request.number] = certificate
        logger.info(
            "\(sender.alias.clipped(toUTF8: 80)) (\(Intake.short(id)), \(sender.remote)) wants to send \(what): "
                + "waiting for hexctl pair --accept \(id.prefix(18))")
        await events.publish(
            .pairRequested, peerUUID: id, peer: sender.alias, versionID: "LocalSend " + sender.version,
            message: "wants to send \(what) (LocalSend)")
        intake.arrivals.publish([.offerWaiting(name: sender.alias, peerUUID: id, what: what)])
        let timer = Task {
            guard (try? await Task.sleep(for: consent.wait)) != nil else { return }
            self.expireConsents()
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { consentReplies[request.number] = $0 }
    }

    /// The person's answer to the offer the device `id` has waiting: a yes pairs the device with
    /// the certificate it showed, then lets the offer in.
    /// - Returns: what was offered, and the certificate now paired (nil for a no).
    /// - Throws: `LookupError.noPairing` when no offer of the device waits; a store error.
    func answerPerson(_ id: String, yes: Bool) async throws -> (what: String, certificate: String?) {
        guard let request = consent.answer(id) else { throw LookupError.noPairing(id) }
        let certificate = consentCertificates.removeValue(forKey: request.number)
        var paired: String?
        if yes, let certificate {
            do {
                _ = try await intake.service.pair(peer: id, fingerprint: certificate)
                paired = certificate
            } catch {
                consentReplies.removeValue(forKey: request.number)?.resume(returning: false)
                throw error
            }
        }
        logger.info("\(yes ? "accepted" : "declined") the offer of \(Intake.short(id)): \(request.what)")
        consentReplies.removeValue(forKey: request.number)?.resume(returning: paired != nil)
        return (request.what, paired)
    }

    /// The offer waiting that `text` names: by the device's ID, a prefix of it (or of its
    /// fingerprint) of 4 digits or more, or its name (any case), when one offer alone matches.
    func offerWaiting(matching text: String) -> LocalSendConsent<String>.Request? {
        let wanted = text.uppercased()
        let fingerprint = wanted.hasPrefix("LOCALSEND:") ? String(wanted.dropFirst(10)) : wanted
        let matches = consent.waiting.filter {
            $0.name.uppercased() == wanted
                || (fingerprint.count >= 4 && $0.key.dropFirst(PeerKind.localSendPrefix.count).hasPrefix(fingerprint))
        }
        return matches.count == 1 ? matches.first : nil
    }

    /// Refuses the offers whose wait is over.
    private func expireConsents() {
        for request in consent.expire(at: .now) {
            consentCertificates[request.number] = nil
            consentReplies.removeValue(forKey: request.number)?.resume(returning: false)
        }
    }
}
