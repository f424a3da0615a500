import Dispatch
import Glibc
import Synchronization
import Testing

@testable import HexNet

/// Commands run without blocking a thread, stopped whole, and always reaped.
@Suite(.timeLimit(.minutes(5))) struct ChildProcessTests {
    @Test func outputErrorsAndTheExitCodeComeBack() async throws {
        let result = try await ChildProcess.run(
            ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], timeout: .seconds(10))
        #expect(result.standardOutput == "out\n" && result.standardError == "err\n")
        #expect(result.exitCode == 3 && !result.timedOut)
    }

    @Test func aMissingProgramIsAnErrorNamingIt() async throws {
        await #expect { try await ChildProcess.run(["/nonexistent/tool"], timeout: .seconds(5)) } throws: { error in
            (error as? ChildProcessError)?.description.contains("/nonexistent/tool") == true
        }
    }

    @Test func outputPastTheLimitIsReadAndDropped() async throws {
        // 3 MB through a 64 KiB pipe: the command finishes only if all of it is read.
        let result = try await ChildProcess.run(
            ["/bin/sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x"], timeout: .seconds(20), outputLimit: 1_000)
        #expect(result.exitCode == 0 && result.standardOutput.utf8.count == 1_000)
    }

    /// A cancelled run kills the whole group and returns only once the command is reaped.
    @Test func cancellingStopsTheGroupAndReapsIt() async throws {
        let directory = "/tmp/hexd-child-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(directory, 0o700) == 0)
        defer {
            _ = unlink(directory + "/pid")
            _ = rmdir(directory)
        }
        // The grandchild writes its pid; the shell waits for it.
        let run = Task {
            try await ChildProcess.run(
                ["/bin/sh", "-c", "sh -c 'echo $$ > \(directory)/pid; exec sleep 60'; true"], timeout: .seconds(60))
        }
        var grandchild: pid_t = 0
        for _ in 0..<200 where grandchild == 0 {
            try await Task.sleep(for: .milliseconds(25))
            grandchild = pid_t(Self.contents(of: directory + "/pid").trimmed) ?? 0
        }
        #expect(grandchild > 0, "the grandchild started")
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.value }
        // kill -9 is delivered at once; the grandchild was reparented, so it may take a moment to vanish.
        for _ in 0..<200 where kill(grandchild, 0) == 0 { try await Task.sleep(for: .milliseconds(25)) }
        #expect(kill(grandchild, 0) != 0, "the grandchild is gone too")
    }

    /// Blocking calls run on the pool's threads in order, and a full pool refuses more at once.
    @Test func theBlockingPoolRunsInOrderAndIsBounded() async throws {
        let pool = BlockingPool(threads: 1, capacity: 1)
        final class Record: Sendable {
            let order = Mutex<[Int]>([])
            let started = Mutex(false)
            let refused = Mutex(0)
        }
        let record = Record()
        let gate = DispatchSemaphore(value: 0)
        // The one thread takes the first job and blocks in it.
        let first = Task {
            try await pool.run {
                record.started.withLock { $0 = true }
                gate.wait()
                record.order.withLock { $0.append(1) }
            }
        }
        for _ in 0..<400 where !record.started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(record.started.withLock { $0 })
        // Two more: the queue holds one, so exactly one is refused, at once.
        let others = (2...3).map { number in
            Task {
                do {
                    try await pool.run { record.order.withLock { $0.append(number) } }
                } catch is SocketError {
                    record.refused.withLock { $0 += 1 }
                }
            }
        }
        for _ in 0..<400 where record.refused.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        gate.signal()
        try await first.value
        for other in others { try await other.value }
        #expect(record.refused.withLock { $0 } == 1, "one of the two waiting jobs was refused")
        let order = record.order.withLock { $0 }
        #expect(order.count == 2 && order.first == 1, "the first job ran first, then the queued one: \(order)")
    }

    private static func contents(of path: String) -> String {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &buffer, buffer.count)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
    }
}

extension String {
    fileprivate var trimmed: String { filter { !$0.isWhitespace } }
}
