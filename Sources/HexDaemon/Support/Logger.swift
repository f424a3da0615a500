import HexCommandLine
import HexKit
import Synchronization

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
    /// Shared by every component, so a flood is counted wherever it is logged.
    private let limiter: LogLimiter

    public init(level: LogLevel, component: String = "hexd") {
        self.init(level: level, component: component, limiter: LogLimiter())
    }

    private init(level: LogLevel, component: String, limiter: LogLimiter) {
        self.level = level
        self.component = component
        self.limiter = limiter
    }

    /// The same logger for a part of the daemon.
    public func named(_ component: String) -> Logger { Logger(level: level, component: component, limiter: limiter) }

    public func log(_ messageLevel: LogLevel, _ message: @autoclosure () -> String) {
        guard messageLevel <= level else { return }
        printError("\(Date().formatted(.iso8601)) \(messageLevel.rawValue) \(component): \(message())")
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }

    /// Logs what peers can cause at will (bad input, floods, cut connections): at most
    /// `LogLimiter.linesPerWindow` lines of one `kind` per window, then one line saying how many
    /// were left out. A flood of bad input cannot flood the log.
    public func limited(_ kind: String, _ messageLevel: LogLevel, _ message: @autoclosure () -> String) {
        guard messageLevel <= level else { return }
        switch limiter.admit(kind, at: .now) {
        case .write(let suppressedBefore):
            if suppressedBefore > 0 { log(messageLevel, "(\(suppressedBefore) more '\(kind)' lines left out in the last \(Int(LogLimiter.window.inSeconds)) s)") }
            log(messageLevel, message())
        case .suppress:
            return
        }
    }
}

/// Counts log lines per kind in fixed windows (see `Logger.limited`).
final class LogLimiter: Sendable {
    static let window = Duration.seconds(10)
    static let linesPerWindow = 5
    /// Kinds tracked at once; a flood of kinds is itself bounded.
    static let maximumKinds = 256

    enum Decision: Equatable {
        /// Write the line; `suppressedBefore` lines of this kind were left out before it.
        case write(suppressedBefore: Int)
        case suppress
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var written = 0
        var suppressed = 0
    }

    private let windows = Mutex<[String: Window]>([:])

    func admit(_ kind: String, at now: ContinuousClock.Instant) -> Decision {
        windows.withLock { windows in
            if var window = windows[kind], now - window.start < Self.window {
                guard window.written < Self.linesPerWindow else {
                    window.suppressed += 1
                    windows[kind] = window
                    return .suppress
                }
                window.written += 1
                windows[kind] = window
                return .write(suppressedBefore: 0)
            }
            let suppressed = windows[kind]?.suppressed ?? 0
            if windows.count >= Self.maximumKinds { windows = windows.filter { now - $0.value.start < Self.window } }
            windows[kind] = Window(start: now, written: 1)
            return .write(suppressedBefore: suppressed)
        }
    }
}
