import HexEngine
import Synchronization

/// Offers from devices of other protocols that wait for the person's yes (a LocalSend device's, a
/// Quick Share sender's files), under `OfferConsent`'s rules: the sender is held until the person
/// answers, its offer expires, or it gives up, with what the carrier keeps of each offer while it
/// waits (`Extra`: LocalSend's certificate and address). Written once for every carrier; a lock
/// rather than an actor, so that a sender's cancellation withdraws its offer at once.
package final class OfferDesk<Extra: Sendable>: Sendable {
    package typealias Request = OfferConsent<String>.Request

    /// An offer the person answered, its sender still held: `reply` lets it go on or refuses it.
    package struct Answer: Sendable {
        package let request: Request
        package let extra: Extra
        private let sender: CheckedContinuation<Bool, Never>?

        fileprivate init(request: Request, extra: Extra, sender: CheckedContinuation<Bool, Never>?) {
            (self.request, self.extra, self.sender) = (request, extra, sender)
        }

        /// Tells the held sender the answer (false: refused after all, as when keeping it failed).
        package func reply(_ yes: Bool) { sender?.resume(returning: yes) }
    }

    private struct Held {
        var extra: Extra
        /// Nil until the sender waits on it.
        var sender: CheckedContinuation<Bool, Never>?
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
    /// gave up: the offer is withdrawn then). `opened` is told of the offer once it waits, before
    /// any answer can come (to tell the person).
    /// - Returns: whether the person said yes, and the sender is still there.
    /// - Throws: `OfferConsent.Refusal` when the offer cannot wait.
    package func ask(
        _ key: String, named name: String, offering what: String, keeping extra: Extra,
        opened: @escaping @Sendable (Request) async -> Void
    ) async throws(OfferConsent<String>.Refusal) -> Bool {
        expire()
        let request = try state.withLock { state throws(OfferConsent<String>.Refusal) -> Request in
            let request = try state.consent.open(key, named: name, offering: what, at: .now)
            state.held[request.number] = Held(extra: extra)
            return request
        }
        let wait = state.withLock { $0.consent.wait }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: wait)) != nil else { return }
            self?.expire()
        }
        defer { timer.cancel() }
        let yes = await withTaskCancellationHandler {
            await withCheckedContinuation { sender in
                let holds = state.withLock { state -> Bool in
                    guard state.held[request.number] != nil else { return false }
                    state.held[request.number]?.sender = sender
                    return true
                }
                // Withdrawn before it was held (the sender gave up at once): refused.
                guard holds else { return sender.resume(returning: false) }
                Task { await opened(request) }
            }
        } onCancel: {
            withdraw(request.number)
        }
        return yes && !Task.isCancelled
    }

    /// The person answered `key`'s offer: it waits no more; its sender is held until `reply`.
    /// Nil when no offer of `key` waits.
    package func answer(_ key: String) -> Answer? {
        state.withLock { state in
            guard let request = state.consent.answer(key) else { return nil }
            let held = state.held.removeValue(forKey: request.number)
            return held.map { Answer(request: request, extra: $0.extra, sender: $0.sender) }
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
        ended?.1?.sender?.resume(returning: false)
        return ended?.0
    }

    /// Refuses the offers whose wait is over.
    /// - Returns: the offers refused.
    @discardableResult
    package func expire() -> [Request] {
        let ended = state.withLock { state in
            state.consent.expire(at: .now).map { ($0, state.held.removeValue(forKey: $0.number)) }
        }
        for (_, held) in ended { held?.sender?.resume(returning: false) }
        return ended.map(\.0)
    }
}
