import HexKit
import HexNet

@testable import HexDaemon

extension PeerTable {
    /// Takes a beacon heard from `address` as `Discovery` hands it to the directory: as a sighting.
    mutating func observe(
        _ beacon: Beacon, from address: IPAddress, at now: ContinuousClock.Instant, pinnedKey: String? = nil,
        signed: Bool = false
    ) -> Change {
        observe(Sighting(beacon, from: address, signed: signed), at: now, pinnedKey: pinnedKey)
    }
}
