import Testing
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// Times each test's own run, for `.ci/run`'s list of the slowest.
///
/// Swift Testing starts every test at once and reports each one's time from
/// that start; most of these tests wait for real processes in bounded,
/// blocking waits, on Swift's shared pool (a thread per core), so a test's
/// reported time counts the minutes it queued behind others. This trait
/// measures from when its body begins to when it ends, and appends
/// `SECONDS<TAB>TEST` to the file `$TETHER_TEST_TIMINGS` names, if set.
public struct TestTiming: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil, let path = Self.path else { return try await function() }
        let started = MonotonicClock.nanoseconds()
        defer { Self.record("\(Double(MonotonicClock.nanoseconds() - started) / 1e9)\t\(test.id)\n", in: path) }
        try await function()
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
    /// Each test's own time, for `.ci/run`: see `TestTiming`.
    public static var timed: Self { TestTiming() }
}
