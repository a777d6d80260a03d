import Synchronization
import Testing
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct EventLoopTests {
    @Test func executeFromManyThreadsRunsEveryJobOnTheLoopThread() async throws {
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let ran = Counter()
        let offLoop = Counter()
        // uv_async_send coalesces wake-ups: every job must still run.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<2_000 {
                        loop.execute {
                            if !loop.inEventLoop { offLoop.value.add(1, ordering: .relaxed) }
                            ran.value.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        let total = try await loop.submit { ran.value.load(ordering: .relaxed) }
        #expect(total == 16_000)
        #expect(offLoop.value.load(ordering: .relaxed) == 0)
    }

    actor LoopBound {
        let loop: EventLoop
        var count = 0
        init(loop: EventLoop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
        func bump() -> Bool {
            count += 1
            return loop.inEventLoop
        }
    }

    @Test func actorsRunOnTheLoopExecutor() async throws {
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let actor = LoopBound(loop: thread.loop)
        for _ in 0..<100 {
            #expect(await actor.bump())
        }
        #expect(await actor.count == 100)
    }

    @Test func stoppingTheLoopClosesHandlesStillOpen() async throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let timer = try await loop.submit {
            let timer = LoopTimer(loop: loop)
            // An hour: still pending however long a busy test run (blocking
            // tests hold the cooperative threads) makes this task wait.
            timer.start(afterMilliseconds: 3_600_000) {}
            return timer
        }
        #expect(try await loop.submit { timer.isActive })
        thread.shutdown()  // joins the loop thread: its writes are visible here
        #expect(timer.isClosed)
    }

    /// What an owner registered for the loop's stop goes once it forgets
    /// it (it closed first), and does not run then: a bus connection made
    /// each time the session bus came back left one behind every time.
    /// The rest run at the stop, in the order they came.
    @Test func aForgottenStopRegistrationIsReleasedAndNeverRuns() async throws {
        let thread = try EventLoopThread()
        var shutDown = false
        defer { if !shutDown { thread.shutdown() } }
        let loop = thread.loop
        let ran = Mutex<[Int]>([])
        let forgotten: [Weak] = try await loop.submit {
            var kept: [Weak] = []
            for index in 0..<100 {
                let owner = Owner()
                let registration = loop.whenStopping { _ = owner; ran.withLock { $0.append(index) } }
                if index % 10 != 0 {
                    kept.append(Weak(owner))
                    loop.forgetStopping(registration)
                }
            }
            return kept
        }
        #expect(forgotten.allSatisfy { $0.object == nil }, "still held: \(forgotten.filter { $0.object != nil }.count)")
        thread.shutdown()  // joins the loop thread: its writes are visible here
        shutDown = true
        #expect(ran.withLock { $0 } == Array(stride(from: 0, to: 100, by: 10)))
    }

    /// What registers for the stop while the loop stops is stopped too:
    /// a stop body that makes its connection again, and a job it resumes
    /// that sends a request, would otherwise leave theirs waiting.
    @Test func whatRegistersForTheStopWhileItStopsRunsToo() async throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let ran = Mutex<[String]>([])
        _ = try await loop.submit {
            loop.whenStopping {
                ran.withLock { $0.append("first") }
                loop.whenStopping { ran.withLock { $0.append("registered by a stop body") } }
                loop.execute { loop.whenStopping { ran.withLock { $0.append("registered by a job") } } }
            }
        }
        thread.shutdown()  // joins the loop thread: its writes are visible here
        #expect(ran.withLock { $0 } == ["first", "registered by a stop body", "registered by a job"])
    }

    @Test func inEventLoopIsFalseElsewhere() throws {
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        #expect(!thread.loop.inEventLoop)
    }
}


private final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

private final class Owner: Sendable {}

private final class Weak: @unchecked Sendable {
    weak var object: Owner?
    init(_ object: Owner) { self.object = object }
}
