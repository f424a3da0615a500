// Full Foundation for Process: tests run the real executables.
import Foundation

/// What an executable of this package printed and how it ended.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let standardOutput: String
    public let standardError: String
}

/// Runs executables built by this package (they sit beside the test bundle).
public enum PackageExecutable {
    /// Where `swift build` put the products of this build.
    public static let binDirectory: String = {
        let testBundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var components = testBundle.split(separator: "/", omittingEmptySubsequences: false)
        while let last = components.last, !last.hasSuffix(".xctest") { components.removeLast() }
        return components.dropLast().joined(separator: "/")
    }()

    /// Runs `name` with `arguments`, feeding it `input`, and waits for it to end.
    /// - Parameter timeout: the process is killed after this long, and the result says so.
    public static func run(
        _ name: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binDirectory + "/" + name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()

        let timer = DispatchSource.makeTimerSource()
        let (seconds, attoseconds) = timeout.components
        timer.schedule(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        timer.setEventHandler { [process] in if process.isRunning { process.terminate() } }
        timer.resume()
        defer { timer.cancel() }

        // Read both pipes while the process runs, so a large output cannot fill a pipe and stall it.
        let output = Collector(stdout.fileHandleForReading)
        let errors = Collector(stderr.fileHandleForReading)
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, standardOutput: output.finish(), standardError: errors.finish())
    }

    /// Reads a pipe to its end on a background queue.
    private final class Collector: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()

        init(_ handle: FileHandle) {
            DispatchQueue.global().async { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }

        func finish() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
}
