import HexCommandLine
import HexKit

/// How much `hexd` writes to standard error.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case error, warning, info, debug

    private var severity: Int {
        switch self {
        case .error: 0
        case .warning: 1
        case .info: 2
        case .debug: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.severity < rhs.severity }
}

/// One line per event on standard error: `<time> <level> <component>: <message>`.
public struct Logger: Sendable {
    public let level: LogLevel
    let component: String

    public init(level: LogLevel, component: String = "hexd") {
        self.level = level
        self.component = component
    }

    /// The same logger for a part of the daemon.
    public func named(_ component: String) -> Logger { Logger(level: level, component: component) }

    public func log(_ messageLevel: LogLevel, _ message: @autoclosure () -> String) {
        guard messageLevel <= level else { return }
        printError("\(Date().formatted(.iso8601)) \(messageLevel.rawValue) \(component): \(message())")
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
}
