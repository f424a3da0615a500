import FoundationEssentials
import HexKit

/// A change of visibility asked for (`hexctl visibility`).
public enum VisibilityChange: Sendable, Equatable {
    case visible
    case hidden
    /// Visible for this long, then hidden.
    case visibleFor(Duration)

    /// The longest `visibleFor`: a day.
    public static let longest = Duration.seconds(86_400)
}

/// The daemon's visibility (`visibility`, and `status`): `visible` or `hidden`, and when a
/// visibility for a while ends (then it is hidden again).
public struct VisibilityReport: Sendable, Codable, Equatable {
    /// `visible` or `hidden`.
    public var visibility: String
    /// When it hides again by itself; nil when it stays as it is.
    public var visibleUntil: Date?

    /// For people: `visible`, `hidden`, or `visible until TIME (4 min left), then hidden`.
    public var text: String {
        guard let visibleUntil else { return visibility }
        let left = Self.timeLeft(visibleUntil.timeIntervalSince(Date()))
        return "visible until \(visibleUntil.formatted(.iso8601)) (\(left) left), then hidden"
    }

    /// `42 s`, `12 min` or `3 h 5 min`, rounded up.
    static func timeLeft(_ interval: Double) -> String {
        // Clamped before the conversion: a report read from a socket may say anything.
        let seconds = Int(min(max(interval.isNaN ? 0 : interval, 0), 1e9).rounded(.up))
        if seconds < 120 { return "\(seconds) s" }
        let minutes = (seconds + 59) / 60
        return minutes < 120 ? "\(minutes) min" : "\(minutes / 60) h \(minutes % 60) min"
    }

    public init(_ visibility: Visibility, at time: Date) {
        switch visibility.settled(at: time) {
        case .visible: self.visibility = "visible"
        case .hidden: self.visibility = "hidden"
        case .visibleUntil(let end):
            self.visibility = "visible"
            visibleUntil = end
        }
    }
}
