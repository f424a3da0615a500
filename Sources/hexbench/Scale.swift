/// How big a benchmark's fixed parts are (attackers, floods, waits): as designed, which gives the
/// figures reported in notes, or small enough to finish in seconds (`--quick`, which CI runs so
/// that a benchmark that no longer runs fails; its figures mean little).
struct Scale: Sendable {
    let quick: Bool

    /// `full`, or `small` in quick mode.
    func pick<T>(_ full: T, quick small: T) -> T { quick ? small : full }
}
