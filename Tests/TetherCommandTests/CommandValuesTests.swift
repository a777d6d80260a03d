import Testing
import TetherGroup
@testable import tether

/// The CLI's own values, in-process: seconds as users type them, and what
/// a probe prints (the contract's text and JSON).
@Suite struct CommandValuesTests {
    @Test(arguments: [("0", 0.0), ("1", 1.0), ("2.5", 2.5), ("0.001", 0.001), ("31536000", 31_536_000.0)])
    func secondsAsTyped(_ text: String, _ value: Double) {
        #expect(Seconds(argument: text)?.value == value)
    }

    @Test(arguments: ["-1", "", "forever", "nan", "inf", "1e400", "31536001", " 1"])
    func secondsRefused(_ text: String) {
        #expect(Seconds(argument: text) == nil, "\(text)")
    }

    @Test func secondsBecomeWholeMillisecondsRoundedUpAndReadBack() throws {
        #expect(try #require(Seconds(argument: "0.0001")).milliseconds == 1)
        #expect(try #require(Seconds(argument: "1.5")).milliseconds == 1_500)
        #expect(try #require(Seconds(argument: "2")).defaultValueDescription == "2")
        #expect(try #require(Seconds(argument: "0.25")).defaultValueDescription == "0.25")
    }

    @Test func targetsAsTyped() throws {
        #expect(try TargetArguments.target(.host, nil) == .host)
        #expect(try TargetArguments.target(.feature, "rec") == .feature(FeatureName("rec")))
        #expect(throws: CLIError.self) { try TargetArguments.target(.host, "extra") }
        #expect(throws: CLIError.self) { try TargetArguments.target(.feature, nil) }
        #expect(throws: CLIError.self) { try TargetArguments.target(.feature, "Bad/Name") }
    }

    @Test func watchUntilReadsItsTwoWords() {
        #expect(WatchUntil(rawValue: "running") == .running)
        #expect(WatchUntil(rawValue: "not-running") == .notRunning)
        #expect(WatchUntil(rawValue: "stopped") == nil)
    }
}
