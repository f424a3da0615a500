import HexCarrier
import HexEngine
import QuickShareCarrier
import Synchronization

/// hexd's carriers of other protocols, LocalSend, KDE Connect and Quick Share, as they become ready. Each is
/// started once hexd serves its own peers, not before: its persona is read then, or made on a
/// first start (LocalSend's RSA key takes up to a second of a core), so that a first start finds
/// hexd peers as fast with the carriers on as with them off.
final class ForeignCarriers: Sendable {
    /// Where one carrier is.
    enum Slot<Carrier: Sendable>: Sendable {
        /// Not running, and why (`--localsend off`, or what stopped its start).
        case off(String)
        /// Being started: what is sent to its devices waits for it.
        case starting
        case up(Carrier)

        var isStarting: Bool { if case .starting = self { true } else { false } }
    }

    private let slots:
        Mutex<
            (
                localSend: Slot<LocalSendCarrier>, kdeConnect: Slot<KDEConnectCarrier>,
                quickShare: Slot<QuickShareCarrier>
            )
        >

    init(localSend: Slot<LocalSendCarrier>, kdeConnect: Slot<KDEConnectCarrier>, quickShare: Slot<QuickShareCarrier>) {
        slots = Mutex((localSend, kdeConnect, quickShare))
    }

    /// hexd as a LocalSend device; nil while it is not one (off, or not started yet).
    var localSend: LocalSendCarrier? {
        if case .up(let carrier) = slots.withLock({ $0.localSend }) { carrier } else { nil }
    }

    /// hexd as a KDE Connect device; nil while it is not one (off, or not started yet).
    var kdeConnect: KDEConnectCarrier? {
        if case .up(let carrier) = slots.withLock({ $0.kdeConnect }) { carrier } else { nil }
    }

    /// hexd as a Quick Share receiver; nil while it is not one (off, or not started yet).
    var quickShare: QuickShareCarrier? {
        if case .up(let carrier) = slots.withLock({ $0.quickShare }) { carrier } else { nil }
    }

    func setLocalSend(_ slot: Slot<LocalSendCarrier>) { slots.withLock { $0.localSend = slot } }
    func setQuickShare(_ slot: Slot<QuickShareCarrier>) { slots.withLock { $0.quickShare = slot } }
    func setKDEConnect(_ slot: Slot<KDEConnectCarrier>) { slots.withLock { $0.kdeConnect = slot } }

    /// A carrier as sending and trust see it: the form of its devices' IDs, and the carrier, or why
    /// a send cannot go now.
    struct Entry {
        let kind: any TrustingCarrier.Type
        /// Nil while it is not up.
        let carrier: (any TrustingCarrier)?
        /// Why a send to one of its devices cannot go while it is not up: for good when it is off,
        /// for a while when it is starting (the outbox tries again).
        let missing: SendError
        /// Whether one of its devices may be named by its full ID now or soon (it is not off).
        let takesIDs: Bool
    }

    /// Every carrier.
    var entries: [Entry] {
        let (localSend, kdeConnect, quickShare) = slots.withLock { ($0.localSend, $0.kdeConnect, $0.quickShare) }
        return [
            Self.entry(localSend, named: "LocalSend"), Self.entry(kdeConnect, named: "KDE Connect"),
            Self.entry(quickShare, named: "Quick Share"),
        ]
    }

    /// The carriers up now.
    var up: [any TrustingCarrier] { entries.compactMap(\.carrier) }

    /// The carriers still starting, by the names people know them by; nil when none is.
    var starting: [String]? {
        let (localSend, kdeConnect, quickShare) = slots.withLock { ($0.localSend, $0.kdeConnect, $0.quickShare) }
        let names = [
            (localSend.isStarting, "LocalSend"), (kdeConnect.isStarting, "KDE Connect"),
            (quickShare.isStarting, "Quick Share"),
        ].filter(\.0).map(\.1)
        return names.isEmpty ? nil : names
    }

    private static func entry<Carrier: TrustingCarrier>(_ slot: Slot<Carrier>, named name: String) -> Entry {
        let carrier: Carrier? = if case .up(let carrier) = slot { carrier } else { nil }
        let takesIDs = if case .off = slot { false } else { true }
        return Entry(kind: Carrier.self, carrier: carrier, missing: missing(slot, named: name), takesIDs: takesIDs)
    }

    private static func missing<Carrier>(_ slot: Slot<Carrier>, named name: String) -> SendError {
        switch slot {
        case .off(let why): .refused("\(name) is off here (\(why))")
        case .starting, .up: .undelivered("\(name) is starting")
        }
    }
}
