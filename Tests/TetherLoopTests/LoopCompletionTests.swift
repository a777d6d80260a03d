import SystemPackage
import Testing
import TetherLoop

/// One way to run a private loop until its work has a result.
@Suite struct LoopCompletionTests {
    @Test func theFirstResultStandsAndStopsTheLoop() throws {
        let result = try EventLoop.runUntilDone { (loop, done: LoopCompletion<Int>) in
            // A timer that would report later must not overwrite the first.
            LoopTimer(loop: loop).start(afterMilliseconds: 1) { done.finish(2) }
            #expect(done.finish(1))
            #expect(!done.finish(3))
            #expect(done.isFinished)
        }
        #expect(result == 1)
    }

    @Test func aResultFromAnotherThreadEndsTheRun() throws {
        let result = try EventLoop.runUntilDone { (_, done: LoopCompletion<String>) in
            Task.detached { done.finish("from a task") }
        }
        #expect(result == "from a task")
    }

    @Test func runUntilReturnsTheResultOfWorkStartedOnTheLoop() throws {
        let loop = try EventLoop()
        let completion = LoopCompletion<Int>(loop: loop)
        let result = loop.run(until: completion) {
            LoopTimer(loop: loop).start(afterMilliseconds: 5) { completion.finish(42) }
        }
        #expect(result == 42)
    }
}
