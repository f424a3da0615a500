import HexKit

extension ReceiveOutcome {
    /// The Alert kept, for tests that compare what it says (its id and time are new each time).
    var keptAlert: ReceivedAlert? {
        if case .alert(let alert) = self { alert } else { nil }
    }
}
