import HexCarrier

/// The store's admission and trust, as carriers ask them.
extension HexService: CarrierStore {}
