import Foundation
import Testing
import TetherTestSupport

/// `tether demo` end to end: the whole day passes, and nothing it started
/// outlives it, also when it is interrupted.
@Suite(.timed) struct DemoCommandTests {
    /// Under a desktop session (a notification server on its bus), where
    /// the rewritten push appears; the interrupted day below runs without.
    @Test(.long) func theDayPassesAndLeavesNothingBehind() throws {
        let scratch = try TemporaryDirectory()
        let desktop = try DesktopSession()
        var environment = desktop.environment
        environment["TMPDIR"] = scratch.path
        let result = try tether(["demo", "--json", "--auth-server", try NestedPackageBuild.demoAuthServer.path()], environment: environment, timeout: 180)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(summary["ok"] as? Bool == true)
        #expect(summary["expiries"] as? Int == 3)
        #expect(summary["refreshes"] as? Int == 3, "one refresh per expiry")
        #expect(summary["reuseDetected"] as? Int == 0)
        #expect(summary["loggedOut"] as? Bool == false)
        #expect((summary["failures"] as? [Any])?.isEmpty == true)
        #expect((summary["leftBehind"] as? [Any])?.isEmpty == true)
        #expect(result.stderr.contains("[11/11]"), "the story goes to stderr with --json")
        #expect(result.stderr.contains("✓ under a desktop session the rewritten push appears on the desktop"), "\(result.stderr)")
        #expect(result.stderr.contains("shown on the desktop by dunst"), "\(result.stderr)")
        try expectNothingLeft(in: scratch)
    }

    @Test(.waits) func ctrlCStopsEverythingAndRemovesItsFiles() throws {
        let scratch = try TemporaryDirectory()
        let demo = try startTether(["demo", "--auth-server", try NestedPackageBuild.demoAuthServer.path()], environment: ["TMPDIR": scratch.path])
        // Mid-day: the host, the keyboard and the server run, and the demo waits for a token to expire.
        _ = try demo.expectLineStarting("      expiry 1: waiting", timeout: 60)
        demo.signal(SIGINT)
        #expect(try demo.waitForExit(timeout: 30) == 130)
        let output = try demo.remainingOutput()
        #expect(output.contains("Interrupted: stopping everything"), "\(output)")
        #expect(output.contains("nothing left behind"), "\(output)")
        try expectNothingLeft(in: scratch)
    }

    /// No directory under `scratch` and no live process whose command line names it.
    private func expectNothingLeft(in scratch: TemporaryDirectory) throws {
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        let survivors = liveProcesses(mentioning: scratch.path)
        #expect(survivors.isEmpty, "still running: \(survivors)")
    }
}
