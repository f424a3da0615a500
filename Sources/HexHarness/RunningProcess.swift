// Full Foundation for Data and Thread; the executables start through SpawnedProcess.
import Foundation

/// What an executable of this package printed and how it ended.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let standardOutput: String
    public let standardError: String
}

/// Runs executables built by this package (they sit beside the test bundle, and beside hexbench).
public enum PackageExecutable {
    /// Where `swift build` put the products of this build: the directory holding the test bundle
    /// this runs in, or else the one holding this executable.
    public static let binDirectory: String = {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let components = executable.split(separator: "/", omittingEmptySubsequences: false)
        let bundle = components.lastIndex { $0.hasSuffix(".xctest") } ?? max(components.count - 1, 0)
        return components[..<bundle].joined(separator: "/")
    }()

    /// Runs `name` (a product of this package, or any absolute path) with `arguments`, feeding it
    /// `input`, and waits for it to end, without blocking a thread of the cooperative pool (tests
    /// run there, two threads on two cores).
    /// - Parameter timeout: the process gets SIGTERM after this long (its status then says so).
    ///   So it does when the calling task is cancelled.
    public static func run(
        _ name: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) async throws -> ProcessResult {
        ignoreBrokenPipes
        let (stdin, stdout, stderr) = (try SpawnPipe(), try SpawnPipe(), try SpawnPipe())
        let child: SpawnedProcess
        do {
            let path = name.hasPrefix("/") ? name : binDirectory + "/" + name
            child = try SpawnedProcess(
                path, arguments, environment: environment, standardInput: stdin.read,
                standardOutput: stdout.write, standardError: stderr.write)
        } catch {
            [stdin, stdout, stderr].forEach {
                close($0.read)
                close($0.write)
            }
            throw error
        }
        // The child has its copies; ours would keep the readers from ever seeing the end.
        [stdin.read, stdout.write, stderr.write].forEach { close($0) }

        let timer = DispatchSource.makeTimerSource()
        let (seconds, attoseconds) = timeout.components
        timer.schedule(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        timer.setEventHandler { child.send(SIGTERM) }
        timer.resume()
        defer { timer.cancel() }

        // Both outputs are read while the process runs, so a large output cannot fill a pipe and stall it.
        let output = Collector(stdout.read)
        let errors = Collector(stderr.read)
        Thread.detachNewThread { [stdin] in
            input.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(stdin.write, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { break }  // the child closed its input: what is left is not wanted
                    offset += written
                }
            }
            close(stdin.write)
        }
        let status = await withTaskCancellationHandler {
            await child.exited()
        } onCancel: {
            child.send(SIGTERM)
        }
        return ProcessResult(
            status: status, standardOutput: await output.finish(), standardError: await errors.finish())
    }

    /// A write to a pipe whose reader is gone fails with EPIPE instead of killing the test process.
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Reads a pipe to its end on a thread of its own (never a cooperative or a dispatch one: tens
    /// of blocked reads would starve them), then closes it.
    private final class Collector: Sendable {
        private let reading: Task<String, Never>

        init(_ descriptor: Int32) {
            reading = Task {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread {
                        var collected: [UInt8] = []
                        var buffer = [UInt8](repeating: 0, count: 65_536)
                        while true {
                            let count = read(descriptor, &buffer, buffer.count)
                            if count < 0 && errno == EINTR { continue }
                            guard count > 0 else { break }
                            collected += buffer[..<count]
                        }
                        close(descriptor)
                        continuation.resume(returning: String(decoding: collected, as: UTF8.self))
                    }
                }
            }
        }

        func finish() async -> String { await reading.value }
    }
}
