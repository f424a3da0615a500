import HexEngine
import Synchronization

/// Offers from devices of other protocols that wait for the person's yes (a LocalSend device's, a
/// Quick Share sender's files), under `OfferConsent`'s rules: the sender is held until the person
/// answers, its offer expires, or it gives up, with what the carrier keeps of each offer while it
/// waits (`Extra`: LocalSend's certificate and address). Written once for every carrier; a lock
/// rather than an actor, so that a sender's cancellation withdraws its offer at once.
package final class OfferDesk<Extra: Sendable>: Sendable {
    package typealias Request = OfferConsent<String>.Request

    /// How an offer's wait ended.
    package enum Outcome: Sendable, Equatable {
        case accepted
        case declined
        /// Its wait was over before the person answered.
        case expired
        /// Its sender gave up (closed its connection, or cancelled).
        case withdrawn
    }

    /// An offer the person answered, its sender still held until `reply`: a sender never replied
    /// to is declined when the answer goes away, so that none is held for ever.
    package final class Answer: Sendable {
        package let request: Request
        package let extra: Extra
        private let sender: Mutex<CheckedContinuation<Outcome, Never>?>

        fileprivate init(request: Request, extra: Extra, sender: CheckedContinuation<Outcome, Never>) {
            (self.request, self.extra) = (request, extra)
            self.sender = Mutex(sender)
        }

        /// Tells the held sender the answer (false: refused after all, as when keeping it failed).
        /// Only the first reply counts.
        package func reply(_ yes: Bool) {
            sender.withLock { $0.take() }?.resume(returning: yes ? .accepted : .declined)
        }

        deinit { reply(false) }
    }

    private struct Held {
        var extra: Extra
        var sender: CheckedContinuation<Outcome, Never>
    }

    private let state: Mutex<(consent: OfferConsent<String>, held: [UInt64: Held])>

    package init(_ consent: OfferConsent<String> = OfferConsent()) {
        state = Mutex((consent, [:]))
    }

    /// The offers waiting, the oldest first.
    package var waiting: [Request] { state.withLock { $0.consent.waiting } }

    /// What was kept of each offer waiting, by its number.
    package var extras: [UInt64: Extra] { state.withLock { $0.held.mapValues(\.extra) } }

    /// Opens the offer of `what` from `name`, answered by `key`, and holds its sender until the
    /// person answers (`answer`), the offer's wait is over, or the task is cancelled (the sender
    /// gave up: the offer is withdrawn then). The offer and its held sender come in one step, so
    /// no answer can come before the sender waits for it; `opened` is told once the offer waits
    /// (to tell the person).
    /// - Returns: how the wait ended; `withdrawn` for a task cancelled before its offer waited.
    /// - Throws: `OfferConsent.Refusal` when the offer cannot wait.
    package func ask(
        _ key: String, named name: String, offering what: String, keeping extra: Extra,
        opened: @escaping @Sendable (Request) async -> Void
    ) async throws(OfferConsent<String>.Refusal) -> Outcome {
        expire()
        // Whether the sender gave up, and the offer's number once it waits: the cancellation
        // handler and the opening see each other's step, whichever comes first.
        let progress = Mutex<(cancelled: Bool, number: UInt64?)>((false, nil))
        var refusal: OfferConsent<String>.Refusal?
        let wait = state.withLock { $0.consent.wait }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: wait)) != nil else { return }
            self?.expire()
        }
        defer { timer.cancel() }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (sender: CheckedContinuation<Outcome, Never>) in
                let opening = progress.withLock { progress -> Result<Request, OfferConsent<String>.Refusal>? in
                    guard !progress.cancelled else { return nil }
                    let result = state.withLock { state in
                        Result { () throws(OfferConsent<String>.Refusal) -> Request in
                            let request = try state.consent.open(key, named: name, offering: what, at: .now)
                            state.held[request.number] = Held(extra: extra, sender: sender)
                            return request
                        }
                    }
                    if case .success(let request) = result { progress.number = request.number }
                    return result
                }
                switch opening {
                case nil: sender.resume(returning: .withdrawn)
                case .failure(let error)?:
                    refusal = error
                    sender.resume(returning: .declined)
                case .success(let request)?: Task { await opened(request) }
                }
            }
        } onCancel: {
            let number = progress.withLock { progress -> UInt64? in
                progress.cancelled = true
                return progress.number
            }
            if let number { withdraw(number) }
        }
        if let refusal { throw refusal }
        return outcome
    }

    /// The person answered `key`'s offer: it waits no more; its sender is held until the answer's
    /// `reply`. Nil when no offer of `key` waits.
    package func answer(_ key: String) -> Answer? {
        state.withLock { state in
            guard let request = state.consent.answer(key), let held = state.held.removeValue(forKey: request.number)
            else { return nil }
            return Answer(request: request, extra: held.extra, sender: held.sender)
        }
    }

    /// The sender withdrew the offer numbered `number`: refused, and no longer asked about. Nil
    /// when it waits no more.
    @discardableResult
    package func withdraw(_ number: UInt64) -> Request? {
        let ended = state.withLock { state -> (Request, Held?)? in
            guard let request = state.consent.withdraw(number) else { return nil }
            return (request, state.held.removeValue(forKey: number))
        }
        ended?.1?.sender.resume(returning: .withdrawn)
        return ended?.0
    }

    /// Refuses the offers whose wait is over.
    /// - Returns: the offers refused.
    @discardableResult
    package func expire() -> [Request] {
        let ended = state.withLock { state in
            state.consent.expire(at: .now).map { ($0, state.held.removeValue(forKey: $0.number)) }
        }
        for (_, held) in ended { held?.sender.resume(returning: .expired) }
        return ended.map(\.0)
    }
}
