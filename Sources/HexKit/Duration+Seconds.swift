extension Duration {
    /// The duration in seconds, as a Double (for JSON, logs and reports).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// `seconds` as a duration when it is a finite number in `range`, else nil: a number from
    /// outside (a peer, a request, a flag) must never reach `Duration.seconds(_:)`, which traps on
    /// values out of its range.
    public static func seconds(validating seconds: Double, in range: ClosedRange<Double>) -> Duration? {
        guard seconds.isFinite, range.contains(seconds) else { return nil }
        return .seconds(seconds)
    }
}

extension Int {
    /// `value` rounded toward zero and clamped to `Int`'s range (0 for NaN): a conversion that
    /// cannot trap, for numbers that are only shown.
    public init(clamping value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {
            self = .max
        } else if value <= -0x1p63 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
