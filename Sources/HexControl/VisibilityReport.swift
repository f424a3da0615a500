import FoundationEssentials
import HexKit

/// The daemon's visibility (`visibility`, and `status`): `visible` or `hidden`, and when a
/// visibility for a while ends (then it is hidden again).
public struct VisibilityReport: Sendable, Codable, Equatable {
    /// `visible` or `hidden`.
    public var visibility: String
    /// When it hides again by itself; nil when it stays as it is.
    public var visibleUntil: Date?

    /// For people: `visible`, `hidden`, or `visible until TIME (4 min left), then hidden`.
    public var text: String {
        let visibility: Visibility =
            if let visibleUntil { .visibleUntil(visibleUntil) } else if self.visibility == "visible" { .visible } else {
                .hidden
            }
        return visibility.text(at: Date())
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
