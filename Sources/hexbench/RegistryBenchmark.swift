// Full Foundation for String(format:) in the shared formatting helpers.
import Dispatch
import Foundation
import HexKit
import Synchronization

/// How fast the query-wrapper registry absorbs link answers from many threads, and how soon a
/// bundle is delivered after its last answer; each against a trivial actor call in the same run.
struct RegistryBenchmark {
    let answers: Int
    let threads = 8

    func run() async throws -> [String] {
        let queries = 100
        let perQuery = answers / queries
        let registry = QueryRegistry()
        let delivered = Delivered(expected: queries)
        var plan: [(UUID, String)] = []
        for _ in 0..<queries {
            let id = UUID()
            let paths = (0..<perQuery).map { "/data/folder/file-\($0).pdf" }
            _ = await registry.open(id: id, kind: .shareLinks, paths: paths) { _ in delivered.one() }
            plan += paths.map { (id, $0) }
        }
        plan.shuffle()
        let answers = plan
        let total = answers.count

        let counter = CountingActor()
        let baseline = await measureAsync {
            await fire(total) { index in await counter.add(answers[index].1) }
            await counter.waitFor(total)
        }
        let absorbed = await measureAsync {
            await fire(total) { index in
                _ = await registry.answer(
                    answers[index].0, path: answers[index].1, link: "https://cloud.example/s/\(index)")
            }
            await delivered.wait()
        }

        // Latency from the last answer to delivery, against an empty actor call.
        var lastToDelivery: [Double] = []
        var emptyCall: [Double] = []
        for _ in 0..<1_000 {
            let id = UUID()
            let stamp = Stamp()
            _ = await registry.open(id: id, kind: .shareLinks, paths: ["/a", "/b", "/c"]) { _ in stamp.mark() }
            await registry.answer(id, path: "/a", link: "A")
            await registry.answer(id, path: "/c", link: "C")
            let start = ContinuousClock.now
            await registry.answer(id, path: "/b", link: "B")
            lastToDelivery.append(milliseconds(stamp.time - start) * 1_000)
            let callStart = ContinuousClock.now
            await counter.touch()
            emptyCall.append(milliseconds(ContinuousClock.now - callStart) * 1_000)
        }
        return [
            "registry: \(total) answers for \(queries) queries of \(perQuery) files, from \(threads) threads, shuffled",
            "  baseline: the same calls to an actor that only counts: "
                + "\(String(format: "%.0f", Double(total) / baseline)) calls/s",
            "  answers absorbed until every bundle is delivered:       "
                + "\(String(format: "%.0f", Double(total) / absorbed)) answers/s, "
                + "\(format(baseline / absorbed)) of baseline",
            "  last answer -> delivery: median \(format(median(lastToDelivery))) µs, "
                + "p99 \(format(percentile(lastToDelivery, 0.99))) µs "
                + "(an empty actor call: median \(format(median(emptyCall))) µs)",
        ]
    }

    /// Calls `body` for every index from `threads` dispatch threads at once, each firing a task per
    /// call without waiting for it, then waits until every task has run.
    private func fire(_ count: Int, _ body: @escaping @Sendable (Int) async -> Void) async {
        let group = DispatchGroup()
        let threads = threads
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for index in stride(from: thread, to: count, by: threads) {
                        group.enter()
                        Task {
                            await body(index)
                            group.leave()
                        }
                    }
                }
                group.notify(queue: .global()) { done.resume() }
            }
        }
    }
}

private func measureAsync(_ body: () async -> Void) async -> Double {
    let start = ContinuousClock.now
    await body()
    return milliseconds(ContinuousClock.now - start) / 1_000
}

/// Counts deliveries and resumes a waiter when all have come.
private final class Delivered: Sendable {
    private let state: Mutex<(count: Int, waiter: CheckedContinuation<Void, Never>?)>
    private let expected: Int
    init(expected: Int) {
        self.expected = expected
        state = Mutex((0, nil))
    }
    func one() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            return state.count == expected ? state.waiter : nil
        }
        waiter?.resume()
    }
    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.count == expected { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// When a delivery callback ran.
private final class Stamp: Sendable {
    private let marked = Mutex(ContinuousClock.now)
    func mark() { marked.withLock { $0 = .now } }
    var time: ContinuousClock.Instant { marked.withLock { $0 } }
}

/// The baseline: an actor that only counts what it is given.
private actor CountingActor {
    private var count = 0
    private var last = ""
    func add(_ value: String) {
        count += 1
        last = value
    }
    func touch() {}
    func waitFor(_ total: Int) async {
        while count < total { await Task.yield() }
    }
}
