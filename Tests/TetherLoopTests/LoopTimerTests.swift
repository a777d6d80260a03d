import Testing
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct LoopTimerTests {
    @Test func oneShotFiresOnceNoEarlierThanItsDelay() async throws {
        let elapsed: UInt64 = try await onLoop { loop, finish in
            let start = loop.now
            let timer = LoopTimer(loop: loop)
            var fired = 0
            timer.start(afterMilliseconds: 20) {
                fired += 1
                // A second timer proves the first does not fire again.
                LoopTimer(loop: loop).start(afterMilliseconds: 30) {
                    #expect(fired == 1)
                    finish(loop.now - start)
                }
            }
        }
        #expect(elapsed >= 20)
    }

    @Test func repeatingTimerFiresUntilStopped() async throws {
        let count: Int = try await onLoop { loop, finish in
            let timer = LoopTimer(loop: loop)
            var count = 0
            timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
                count += 1
                if count == 5 {
                    timer.stop()
                    LoopTimer(loop: loop).start(afterMilliseconds: 20) { finish(count) }
                }
            }
        }
        #expect(count == 5)
    }

    @Test func closedTimerNeverFires() async throws {
        let fired: Bool = try await onLoop { loop, finish in
            var fired = false
            let timer = LoopTimer(loop: loop)
            timer.start(afterMilliseconds: 5) { fired = true }
            timer.close()
            LoopTimer(loop: loop).start(afterMilliseconds: 30) { finish(fired) }
        }
        #expect(!fired)
    }
}
