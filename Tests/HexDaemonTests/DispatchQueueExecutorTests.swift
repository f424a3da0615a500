import Testing

@testable import HexDaemon

/// The store's executor: its jobs run on its queue, and it says when code is (not) on it.
@Suite(.timeLimit(.minutes(5))) struct DispatchQueueExecutorTests {
    actor OnQueue {
        let executor = DispatchQueueExecutor(label: "hexd.test")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Checks the isolation both ways the runtime does: the executor's own check, and the
        /// standard library's, which asks the executor.
        func checkedInside() -> Bool {
            executor.checkIsolated()
            preconditionIsolated("an actor method runs on its executor")
            return true
        }
    }

    @Test func anActorsMethodsRunOnItsQueue() async {
        let actor = OnQueue()
        let inside = await actor.checkedInside()
        #expect(inside)
    }

    /// Off the queue, the check traps: code that is not on the store's thread cannot pass for it.
    @Test func codeOffTheQueueIsCaught() async {
        await #expect(processExitsWith: .failure) {
            DispatchQueueExecutor(label: "hexd.test").checkIsolated()
        }
    }
}
