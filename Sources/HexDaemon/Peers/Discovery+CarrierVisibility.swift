import HexCarrier

/// Whether hexd is visible, as carriers ask it.
extension Discovery: CarrierVisibility {}
