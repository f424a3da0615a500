/// The bounds a reader enforces while it reads, so that no input can cost more than its size.
public struct JSONLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects accepted; the top-level value is depth 1.
    public var maximumDepth: Int

    public init(maximumDepth: Int = JSONLimits.defaultMaximumDepth) {
        self.maximumDepth = maximumDepth
    }

    /// 512 levels: far beyond any envelope (which needs 4), low enough that no reader's stack or
    /// memory is at risk. Protocol.md documents this bound.
    public static let defaultMaximumDepth = 512
    public static let `default` = JSONLimits()
}
