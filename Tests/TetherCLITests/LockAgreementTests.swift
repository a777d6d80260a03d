import Foundation
import Testing
import TetherTestSupport

/// Invariant 12: probe and hold always agree, and refusals come at once.
@Suite(.timed) struct LockAgreementTests {
    /// A foreign *shared* flock is not a holder: probe says not running, and
    /// hold succeeds at once (it used to spin 5 s on the loop and then fail).
    @Test func aSharedFlockIsNotAHolderForProbeAndHoldAlike() throws {
        let group = try TestGroup()
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)  // creates the layout
        let shared = try TestProcess("/usr/bin/flock", ["-s", group.featureLock("rec"), "sh", "-c", "echo ready; exec cat"])
        _ = try shared.expectLine("ready")

        #expect(try group.run(["probe", "feature", "rec"]).status == 1)
        let started = Date()
        let holder = try group.startHold(["feature", "rec"], ["sh", "-c", "echo held; exec cat"])
        _ = try holder.expectLine("held")
        #expect(Date().timeIntervalSince(started) < 3, "hold took \(Date().timeIntervalSince(started)) s")
        // While held, probes say running, and flock(1) -n (exclusive) fails.
        #expect(try group.run(["probe", "feature", "rec"]).status == 0)
        #expect(try runCommand("/usr/bin/flock", ["-n", group.featureLock("rec"), "true"]).status == 1)
        holder.closeStdin()
        #expect(try holder.waitForExit() == 0)
        shared.closeStdin()
        #expect(try shared.waitForExit() == 0)
    }

    /// The same through the host: `feature start` with a shared flock held.
    @Test func hostStartsAFeatureDespiteASharedFlockAndAnswersAtOnce() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHost()
        #expect(try fixture.group.run(["probe", "feature", "rec"]).status == 1)
        let shared = try TestProcess("/usr/bin/flock", ["-s", fixture.group.featureLock("rec"), "sh", "-c", "echo ready; exec cat"])
        _ = try shared.expectLine("ready")
        let started = Date()
        #expect(try fixture.group.run(["feature", "start", "rec"]).status == 0)
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(try fixture.group.run(["probe", "feature", "rec"]).status == 0)
        shared.closeStdin()
        _ = try shared.waitForExit()
        #expect(try host.stop() == 0)
    }

    /// An exclusive flock is a holder: hold refuses within milliseconds and
    /// probe names the holder.
    @Test func anExclusiveFlockIsRefusedAtOnceAndProbeAgrees() throws {
        let group = try TestGroup()
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)
        let exclusive = try TestProcess("/usr/bin/flock", ["-x", group.featureLock("rec"), "sh", "-c", "echo ready; exec cat"])
        _ = try exclusive.expectLine("ready")
        let started = Date()
        let hold = try group.run(["hold", "feature", "rec", "--", "true"])
        #expect(hold.status == 1)
        #expect(Date().timeIntervalSince(started) < 2, "a refusal must not wait")
        let probe = try group.run(["probe", "feature", "rec", "--json"])
        #expect(probe.status == 0)
        #expect(try group.json(probe)["pid"] as? Int == Int(exclusive.pid))
        exclusive.closeStdin()
        _ = try exclusive.waitForExit()
    }
}
