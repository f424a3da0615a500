import HexCarrier
import HexEngine
import Synchronization

/// hexd's carriers of other protocols, LocalSend, KDE Connect and Quick Share, as they become ready,
/// in one list: sending, trust, `hexctl status` and `hexctl peers` ask each in turn. Each is started
/// once hexd serves its own peers, not before: its persona is read then, or made on a first start
/// (LocalSend's RSA key takes up to a second of a core), so that a first start finds hexd peers as
/// fast with the carriers on as with them off.
final class ForeignCarriers: Sendable {
    /// Where one carrier is.
    enum Slot: Sendable {
        /// Not running, and why (`--localsend off`, or what stopped its start).
        case off(String)
        /// Being started: what is sent to its devices waits for it.
        case starting
        case up(any Carrier)

        var isStarting: Bool { if case .starting = self { true } else { false } }
    }

    private let slots: Mutex<[(kind: any Carrier.Type, slot: Slot)]>

    /// The carriers in the order they are asked, each in its slot.
    init(_ slots: [(kind: any Carrier.Type, slot: Slot)]) {
        self.slots = Mutex(slots)
    }

    /// Puts the carrier of `kind` in `slot`.
    func set(_ kind: any Carrier.Type, _ slot: Slot) {
        slots.withLock { slots in
            if let index = slots.firstIndex(where: { $0.kind == kind }) { slots[index].slot = slot }
        }
    }

    /// Every carrier.
    var entries: [CarrierEntry] {
        slots.withLock { $0 }.map { kind, slot in
            switch slot {
            case .up(let carrier): CarrierEntry(carrier)
            case .starting: CarrierEntry(kind: kind, state: .starting)
            case .off(let why): CarrierEntry(kind: kind, state: .off(why))
            }
        }
    }

    /// The carriers up now.
    var up: [any Carrier] {
        slots.withLock { $0 }.compactMap { if case .up(let carrier) = $0.slot { carrier } else { nil } }
    }

    /// The carriers still starting, by the names people know them by; nil when none is.
    var starting: [String]? {
        let names = slots.withLock { $0 }.filter { $0.slot.isStarting }.map { $0.kind.name }
        return names.isEmpty ? nil : names
    }
}
