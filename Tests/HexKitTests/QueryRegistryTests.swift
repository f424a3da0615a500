import HexKit
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(5))) struct QueryRegistryTests {
    /// Collects the outcomes the registry delivers, to check there is exactly one per query.
    final class Deliveries: Sendable {
        private let outcomes = Mutex<[UUID: [QueryRegistry.Outcome]]>([:])
        func callback(_ id: UUID) -> @Sendable (QueryRegistry.Outcome) -> Void {
            { outcome in self.outcomes.withLock { $0[id, default: []].append(outcome) } }
        }
        func of(_ id: UUID) -> [QueryRegistry.Outcome] { outcomes.withLock { $0[id] ?? [] } }
    }

    @Test func answersInAnyOrderDeliverOnceInSelectionOrder() async {
        let registry = QueryRegistry()
        let deliveries = Deliveries()
        let id = UUID()
        #expect(
            await registry.open(
                id: id, kind: .shareLinks, paths: ["/a", "/b", "/c", "/a"], deliver: deliveries.callback(id)))
        #expect(await registry.answer(id, path: "/c", link: "C") == .accepted)
        #expect(await registry.answer(id, path: "/c", link: "C2") == .slotAlreadyFilled, "the first answer wins")
        #expect(await registry.answer(id, path: "/zzz", link: "Z") == .unknownPath)
        #expect(
            await registry.progress(of: id)
                == QueryRegistry.Progress(id: id, kind: .shareLinks, answered: 1, total: 3, waiting: ["/a", "/b"]))
        #expect(await registry.answer(id, path: "/a", link: "A") == .accepted)
        #expect(deliveries.of(id).isEmpty)
        #expect(await registry.answer(id, path: "/b", link: "B") == .completed)
        #expect(deliveries.of(id) == [.delivered(["A", "B", "C"])])
        #expect(await registry.answer(id, path: "/b", link: "late") == .unknownQuery, "late answers are ignored")
        #expect(await registry.inFlight.isEmpty)
    }

    @Test func theFirstFailureEndsTheQueryOnce() async {
        let registry = QueryRegistry()
        let deliveries = Deliveries()
        let id = UUID()
        _ = await registry.open(id: id, kind: .shareLinks, paths: ["/a", "/b"], deliver: deliveries.callback(id))
        #expect(await registry.fail(id, path: "/b", reason: "no such file"))
        #expect(await !registry.fail(id, path: "/a", reason: "second failure"))
        #expect(await registry.answer(id, path: "/a", link: "A") == .unknownQuery)
        #expect(deliveries.of(id) == [.failed(path: "/b", reason: "no such file")])
    }

    @Test func cancelEndsAQueryOnce() async {
        let registry = QueryRegistry()
        let deliveries = Deliveries()
        let (cancelled, alive) = (UUID(), UUID())
        _ = await registry.open(
            id: cancelled, kind: .shareLinks, paths: ["/a"], deliver: deliveries.callback(cancelled))
        _ = await registry.open(id: alive, kind: .shareLinks, paths: ["/a"], deliver: deliveries.callback(alive))
        #expect(await registry.cancel(cancelled))
        #expect(await !registry.cancel(cancelled))
        #expect(await registry.answer(cancelled, path: "/a", link: "A") == .unknownQuery)
        #expect(deliveries.of(cancelled) == [.cancelled])
        #expect(await registry.inFlight.map(\.id) == [alive])
    }

    @Test func anIdIsOpenOnceAndAQueryNeedsAPath() async {
        let registry = QueryRegistry()
        let deliveries = Deliveries()
        let id = UUID()
        #expect(await registry.open(id: id, kind: .shareLinks, paths: ["/file"], deliver: deliveries.callback(id)))
        #expect(
            await !registry.open(id: id, kind: .shareLinks, paths: ["/other"], deliver: deliveries.callback(id)),
            "ids are unique")
        #expect(await registry.answer(id, path: "/file", link: "https://x/1") == .completed)
        #expect(deliveries.of(id) == [.delivered(["https://x/1"])])
        #expect(await !registry.open(id: UUID(), kind: .shareLinks, paths: [], deliver: deliveries.callback(id)))
    }

    /// Thousands of files, answers from eight concurrent tasks in random order with duplicates
    /// and strays, failures in the middle, and cancels racing completion:
    /// exactly one outcome per query, consistent with what fail and cancel reported, and an
    /// empty registry at the end. Bounded: 300 queries, about 13,000 paths.
    @Test func stress() async {
        let registry = QueryRegistry()
        let deliveries = Deliveries()
        struct Plan: Sendable {
            let id: UUID
            let paths: [String]
            let failAt: Int?
            let cancelAt: Int?
        }
        var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        var plans = [Plan(id: UUID(), paths: (0..<3_000).map { "/big/file-\($0)" }, failAt: nil, cancelAt: nil)]
        for index in 0..<300 {
            let count = Int.random(in: 1...60, using: &generator)
            plans.append(
                Plan(
                    id: UUID(), paths: (0..<count).map { "/q\(index)/\($0)" },
                    failAt: index % 3 == 0 ? Int.random(in: 0..<count, using: &generator) : nil,
                    cancelAt: index % 6 == 1 ? Int.random(in: 0..<count, using: &generator) : nil))
        }
        for plan in plans {
            _ = await registry.open(
                id: plan.id, kind: .shareLinks, paths: plan.paths, deliver: deliveries.callback(plan.id))
        }
        // Every answer once, a tenth of them twice, some strays; shuffled; failures and cancels
        // are placed among the answers of their query.
        enum Action: Sendable {
            case answer(UUID, String)
            case fail(UUID, String)
            case cancel(UUID)
        }
        var actions: [Action] = []
        for plan in plans {
            for (index, path) in plan.paths.enumerated() {
                actions.append(.answer(plan.id, path))
                if index % 10 == 0 { actions.append(.answer(plan.id, path)) }
                if index == plan.failAt { actions.append(.fail(plan.id, path)) }
                if index == plan.cancelAt { actions.append(.cancel(plan.id)) }
            }
            actions.append(.answer(plan.id, "/not/asked"))
        }
        actions.shuffle(using: &generator)
        let shuffled = actions

        /// Which queries a `fail` or `cancel` call reported it ended.
        final class Enders: Sendable {
            let failed = Mutex<Set<UUID>>([])
            let cancelled = Mutex<Set<UUID>>([])
        }
        let enders = Enders()
        let workers = 8
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                let share = stride(from: worker, to: shuffled.count, by: workers).map { shuffled[$0] }
                group.addTask {
                    for action in share {
                        switch action {
                        case .answer(let id, let path): await registry.answer(id, path: path, link: "link:" + path)
                        case .fail(let id, let path):
                            if await registry.fail(id, path: path, reason: "boom") {
                                enders.failed.withLock { _ = $0.insert(id) }
                            }
                        case .cancel(let id):
                            if await registry.cancel(id) { enders.cancelled.withLock { _ = $0.insert(id) } }
                        }
                    }
                }
            }
        }
        #expect(await registry.inFlight.isEmpty)
        let failed = enders.failed.withLock { $0 }
        let cancelled = enders.cancelled.withLock { $0 }
        for plan in plans {
            let outcomes = deliveries.of(plan.id)
            #expect(outcomes.count == 1, "query \(plan.id) ended \(outcomes.count) times")
            switch outcomes.first {
            case .delivered(let links)?:
                #expect(links == plan.paths.map { "link:" + $0 }, "in selection order")
                #expect(!failed.contains(plan.id) && !cancelled.contains(plan.id))
            case .failed(_, let reason)?:
                #expect(failed.contains(plan.id) && reason == "boom")
            case .cancelled?:
                #expect(cancelled.contains(plan.id))
            case nil:
                Issue.record("query \(plan.id) never ended")
            }
        }
        #expect(
            deliveries.of(plans[0].id) == [.delivered(plans[0].paths.map { "link:" + $0 })],
            "the 3000-file query completes")
    }
}
