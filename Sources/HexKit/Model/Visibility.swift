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
