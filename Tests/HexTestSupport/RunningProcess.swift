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

    /// Runs `name` (a product of this package, or any absolute path) with `arguments`, feeding it
    /// `input`, and waits for it to end, without blocking a thread of the cooperative pool (tests
    /// run there, two threads on two cores).
    /// - Parameter timeout: the process is killed after this long, and the result says so. So
    ///   it is when the calling task is cancelled.
    public static func run(
        _ name: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) async throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: name.hasPrefix("/") ? name : binDirectory + "/" + name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let exited = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { exited.continuation.yield($0.terminationStatus); exited.continuation.finish() }
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
        // Cancelling the calling task terminates the process (as Ctrl-C would) and still waits
        // for its end: the wait is a task of its own, which the cancellation does not reach.
        let ended = Task {
            for await code in exited.stream { return code }
            return Int32(-1)
        }
        let status = await withTaskCancellationHandler { await ended.value } onCancel: { [process] in process.terminate() }
        return ProcessResult(status: status, standardOutput: await output.finish(), standardError: await errors.finish())
    }

    /// Reads a pipe to its end on a dispatch thread (never a cooperative one).
    private final class Collector: Sendable {
        private let reading: Task<String, Never>

        init(_ handle: FileHandle) {
            reading = Task {
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        continuation.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self))
                    }
                }
            }
        }

        func finish() async -> String { await reading.value }
    }
}
