import Testing
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// Runs each test on a thread of its own, `width` at a time (and `width`
/// of those marked `.waits` beside them), and times its own run for
/// `.ci/run`'s list of the slowest.
///
/// Most of these tests wait for real processes in bounded, blocking waits.
/// Swift Testing runs a synchronous test on Swift's shared pool (a thread
/// per core): two such waits on a 2-core machine stall every other test,
/// async ones mid-way included, and each test's reported time counts the
/// minutes it queued behind others. With this trait on a suite, a test
/// waits (suspended, holding no thread) for one of `width` slots, then its
/// body prefers an event loop thread of its own as its task executor, so its
/// waits block only that thread and its awaits resume there. Its time, from
/// when the body begins to when it ends, is appended as `SECONDS<TAB>TEST`
/// to the file `$TETHER_TEST_TIMINGS` names, if set.
package struct TestTiming: SuiteTrait, TestTrait, TestScoping {
    /// Tests running at once: as many as Swift's pool ran on the 2-core
    /// machines the suite's timeouts are set for; `TETHER_TEST_WIDTH` (1-8)
    /// where tests wait more than they compute (the VM tier's emulated guest).
    package static let width: Int = {
        guard let text = getenv("TETHER_TEST_WIDTH").map({ String(cString: $0) }), let value = Int(text),
              (1...8).contains(value) else { return 2 }
        return value
    }()

    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?,
                              performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        let slots = test.traits.contains { $0 is WaitingTest } ? TestSlots.waiting : TestSlots.shared
        await slots.acquire(first: test.traits.contains { $0 is LongTest })
        defer { Task { await slots.release() } }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let started = MonotonicClock.nanoseconds()
        defer {
            if let path = Self.path {
                let milliseconds = (MonotonicClock.nanoseconds() - started) / 1_000_000
                let fraction = String(milliseconds % 1000)
                let seconds = "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
                Self.record("\(seconds)\t\(test.id)\n", in: path)
            }
        }
        try await withTaskExecutorPreference(thread.loop.taskExecutor) { try await function() }
    }

    static let path = getenv("TETHER_TEST_TIMINGS").map { String(cString: $0) }

    /// One write of the whole line: lines of tests ending at once never interleave.
    static func record(_ line: String, in path: String) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = Array(line.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}

extension Trait where Self == TestTiming {
    /// Each test on a thread of its own, a few at a time, timed: see `TestTiming`.
    package static var timed: Self { TestTiming() }
}

/// Marks a test (or a suite's tests) that takes long of its own: under
/// `.timed` it takes a slot before every test queued without the mark, so
/// the run does not end on it. (Swift Testing starts every test at once,
/// in declaration order; with first come first served a 30 s test queued
/// last ran alone while the rest of the machine idled.)
package struct LongTest: TestTrait, SuiteTrait {
    package var isRecursive: Bool { true }
}

extension Trait where Self == LongTest {
    /// Takes long: starts before the others (see `LongTest`).
    package static var long: Self { LongTest() }
}

/// Marks a test that spends its time waiting out a deadline the product
/// keeps (a stop's grace, a bus call's timeout, a device login's polling),
/// not computing: under `.timed` it takes a slot of its own kind (as many
/// as the width), so the CPU the others need is not held idle meanwhile.
/// (Nine such tests, measured at under a tenth of a CPU for 7-23 s each,
/// held half the run's slots for two minutes.)
package struct WaitingTest: TestTrait, SuiteTrait {
    package var isRecursive: Bool { true }
}

extension Trait where Self == WaitingTest {
    /// Mostly waits: runs beside the others (see `WaitingTest`).
    package static var waits: Self { WaitingTest() }
}

/// A counting semaphore for tasks: waiting suspends, never blocks. Long
/// tests' waiters are served first.
actor TestSlots {
    static let shared = TestSlots(TestTiming.width)
    /// For tests marked `.waits`.
    static let waiting = TestSlots(TestTiming.width)
    private var free: Int
    private var waitingLong: [CheckedContinuation<Void, Never>] = []
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire(first: Bool) async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { continuation in
            if first { waitingLong.append(continuation) } else { waiting.append(continuation) }
        }
    }

    func release() {
        if !waitingLong.isEmpty {
            waitingLong.removeFirst().resume()
        } else if !waiting.isEmpty {
            waiting.removeFirst().resume()
        } else {
            free += 1
        }
    }
}
