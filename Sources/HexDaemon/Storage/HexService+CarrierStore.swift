import HexCarrier

/// The store's admission and trust, as carriers ask them.
extension HexService: CarrierStore {
    func knownVersion(of uuid: String) throws -> String? {
        try knownPeer(id: uuid)?.versionID
    }
}
