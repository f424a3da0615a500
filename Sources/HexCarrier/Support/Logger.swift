import HexCommandLine
import HexJSON
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

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `<time> <level> <component>: <message>` then the fields as `key=value`: for people.
    case text
    /// `ts=… level=… component=… msg="…" key=value …`: one logfmt record per line.
    case logfmt
    /// One JSON object per line: `ts`, `level`, `component`, `msg` and the fields.
    case json
}

/// One line per event on standard error, in the chosen format. A line has a time (with
/// milliseconds), a level, the component (`tcp`, `discovery`, `control`…), a message, and fields
/// that name what it is about (`peer`, `hex`, `status`…), so lines can be searched and counted.
public struct Logger: Sendable {
    public let level: LogLevel
    public let format: LogFormat
    package let component: String
    /// Shared by every component, so a flood is counted wherever it is logged.
    private let limiter: LogLimiter

    /// The fields of a line, in order.
    public typealias Fields = [(String, String)]

    public init(level: LogLevel, format: LogFormat = .text, component: String = "hexd") {
        self.init(level: level, format: format, component: component, limiter: LogLimiter())
    }

    private init(level: LogLevel, format: LogFormat, component: String, limiter: LogLimiter) {
        self.level = level
        self.format = format
        self.component = component
        self.limiter = limiter
    }

    /// The same logger for a part of the daemon.
    public func named(_ component: String) -> Logger {
        Logger(level: level, format: format, component: component, limiter: limiter)
    }

    public func log(
        _ messageLevel: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []
    ) {
        guard messageLevel <= level else { return }
        printError(line(messageLevel, message(), fields(), time: Date()))
    }

    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        log(.error, message(), fields())
    }
    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        log(.warning, message(), fields())
    }
    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        log(.info, message(), fields())
    }
    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        log(.debug, message(), fields())
    }

    /// Logs what peers can cause at will (bad input, floods, cut connections): at most
    /// `LogLimiter.linesPerWindow` lines of one `kind` per window, then one line saying how many
    /// were left out. A flood of bad input cannot flood the log.
    public func limited(
        _ kind: String, _ messageLevel: LogLevel, _ message: @autoclosure () -> String,
        _ fields: @autoclosure () -> Fields = []
    ) {
        guard messageLevel <= level else { return }
        switch limiter.admit(kind, at: .now) {
        case .write(let suppressedBefore):
            if suppressedBefore > 0 {
                log(
                    messageLevel,
                    "(\(suppressedBefore) more '\(kind)' lines left out "
                        + "in the last \(Int(LogLimiter.window.inSeconds)) s)",
                    [("kind", kind), ("suppressed", String(suppressedBefore))])
            }
            log(messageLevel, message(), fields())
        case .suppress:
            return
        }
    }

    /// One line in this logger's format.
    package func line(_ messageLevel: LogLevel, _ message: String, _ fields: Fields, time: Date) -> String {
        let timestamp = time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        switch format {
        case .text:
            // A message can carry a peer's text: its control characters are escaped, so it
            // stays one line.
            let oneLine =
                message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
                ? String(Self.logfmtValue(message).dropFirst().dropLast()) : message
            return "\(timestamp) \(messageLevel.rawValue) \(component): \(oneLine)"
                + fields.map { " \($0.0)=\(Self.logfmtValue($0.1))" }.joined()
        case .logfmt:
            let record =
                [("ts", timestamp), ("level", messageLevel.rawValue), ("component", component), ("msg", message)]
                + fields
            return record.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            var writer = JSONWriter(escapeSlashes: false)
            writer.beginObject()
            for (key, value) in [
                ("ts", timestamp), ("level", messageLevel.rawValue), ("component", component), ("msg", message),
            ] + fields {
                writer.member(key, value)
            }
            writer.endObject()
            return String(decoding: writer.bytes, as: UTF8.self)
        }
    }

    /// A logfmt value: bare when it is a plain word, else quoted with `"`, `\\` and control
    /// characters escaped (so a value from a peer cannot forge a field or a line).
    package static func logfmtValue(_ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy {
                $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" && $0.value != 0x7F
            }
        if plain { return value }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                quoted += "\\u{\(String(scalar.value, radix: 16))}"
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

/// Counts log lines per kind in fixed windows (see `Logger.limited`).
package final class LogLimiter: Sendable {
    package static let window = Duration.seconds(10)
    package static let linesPerWindow = 5
    /// Kinds tracked at once; a flood of kinds is itself bounded.
    static let maximumKinds = 256

    package enum Decision: Equatable {
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

    package func admit(_ kind: String, at now: ContinuousClock.Instant) -> Decision {
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
