import Glibc
import Testing
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct SignalWatcherTests {
    @Test func deliversASignalOnTheLoopThread() async throws {
        let (signal, onLoopThread): (Int32, Bool) = try await onLoop { loop, finish in
            _ = try SignalWatcher(loop: loop, signal: SIGUSR2) { signal in
                finish((signal, loop.inEventLoop))
            }
            kill(getpid(), SIGUSR2)
        }
        #expect(signal == SIGUSR2)
        #expect(onLoopThread)
    }
}
