import FoundationEssentials

/// Whether this daemon lets itself be found (Protocol.md, section 9.1). Hidden, it sends no
/// beacons and answers no queries, and said `bye` when it hid; it still hears others, and paired
/// peers still reach it by address. Visible for a while, it hides again by itself.
public enum Visibility: Sendable, Equatable {
    case visible
    case hidden
    /// Visible until this time, then hidden.
    case visibleUntil(Date)

    /// Whether it announces itself at `time`.
    public func isVisible(at time: Date) -> Bool {
        switch self {
        case .visible: true
        case .hidden: false
        case .visibleUntil(let end): time < end
        }
    }

    /// What it is at `time`: a visibility whose time is over is hidden.
    public func settled(at time: Date) -> Visibility {
        isVisible(at: time) ? self : .hidden
    }

    /// For people, at `time`: `visible`, `hidden`, or `visible until TIME (4 min left), then hidden`.
    public func text(at time: Date) -> String {
        switch settled(at: time) {
        case .visible: return "visible"
        case .hidden: return "hidden"
        case .visibleUntil(let end):
            let left = Self.timeLeft(end.timeIntervalSince(time))
            return "visible until \(end.formatted(.iso8601)) (\(left) left), then hidden"
        }
    }

    /// `42 s`, `12 min` or `3 h 5 min`, rounded up.
    static func timeLeft(_ interval: Double) -> String {
        // Clamped before the conversion: a time read from a socket may say anything.
        let seconds = Int(min(max(interval.isNaN ? 0 : interval, 0), 1e9).rounded(.up))
        if seconds < 120 { return "\(seconds) s" }
        let minutes = (seconds + 59) / 60
        return minutes < 120 ? "\(minutes) min" : "\(minutes / 60) h \(minutes % 60) min"
    }

    /// How it is kept in the database: `visible`, `hidden`, or `visible-until:` and the seconds
    /// since 1970.
    public var stored: String {
        switch self {
        case .visible: "visible"
        case .hidden: "hidden"
        case .visibleUntil(let end): "visible-until:\(end.timeIntervalSince1970)"
        }
    }

    /// Reads `stored`; nil for anything else.
    public init?(stored text: String) {
        switch text {
        case "visible": self = .visible
        case "hidden": self = .hidden
        default:
            guard text.hasPrefix("visible-until:"), let seconds = Double(text.dropFirst("visible-until:".count)),
                seconds.isFinite
            else { return nil }
            self = .visibleUntil(Date(timeIntervalSince1970: seconds))
        }
    }
}

/// A change of visibility asked for (`hexctl visibility`).
public enum VisibilityChange: Sendable, Equatable {
    case visible
    case hidden
    /// Visible for this long, then hidden.
    case visibleFor(Duration)

    /// The longest `visibleFor`: a day.
    public static let longest = Duration.seconds(86_400)
}
