extension Duration {
    /// The duration in seconds, as a Double (for JSON, logs and reports).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
