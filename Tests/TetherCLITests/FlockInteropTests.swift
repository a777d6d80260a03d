import Foundation
import Testing
import TetherTestSupport

/// Invariant 4: util-linux flock(1) (and so Darwin O_EXLOCK, which is the
/// same flock(2) lock) and Tether see each other's locks, both ways.
@Suite(.timed) struct FlockInteropTests {
    @Test func flockHolderReadsAsRunningAndBlocksTether() throws {
        let group = try TestGroup()
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)  // creates the layout
        let flock = try TestProcess("/usr/bin/flock", [group.featureLock("rec"), "sh", "-c", "echo ready; exec cat"])
        try flock.expectLine("ready")

        let probe = try group.run(["probe", "feature", "rec", "--json"])
        #expect(probe.status == 0)
        #expect(try group.json(probe)["pid"] as? Int == Int(flock.pid))

        let hold = try group.run(["hold", "feature", "rec", "--", "true"])
        #expect(hold.status == 1)

        flock.closeStdin()
        #expect(try flock.waitForExit() == 0)
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)
        #expect(try group.run(["hold", "feature", "rec", "--", "true"]).status == 0)
    }

    @Test func tetherHolderMakesFlockNonBlockingFail() throws {
        let group = try TestGroup()
        let holder = try group.startHold(["feature", "rec"], ["sh", "-c", "echo ready; exec cat"])
        try holder.expectLine("ready")
        #expect(try runCommand("/usr/bin/flock", ["-n", group.featureLock("rec"), "true"]).status == 1)
        holder.closeStdin()
        #expect(try holder.waitForExit() == 0)
        #expect(try runCommand("/usr/bin/flock", ["-n", group.featureLock("rec"), "true"]).status == 0)
    }

    /// A keyboard without open access may take no lock (seccomp), not even
    /// the probe's shared trial flock: it reads the kernel's table instead,
    /// and still sees a flock(1) holder come and go.
    @Test func aReadOnlyKeyboardSeesAFlockHolderWithoutTakingALock() throws {
        let group = try TestGroup()
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)  // creates the layout
        let flock = try TestProcess("/usr/bin/flock", [group.featureLock("rec"), "sh", "-c", "echo ready; exec cat"])
        try flock.expectLine("ready")
        let keyboard = try TestProcess(exampleExecutable("example-keyboard"), ["--group", group.path],
                                       environment: group.environment)
        defer { keyboard.stopAlways() }
        func answer(_ question: String) throws -> String {
            keyboard.writeStdin(question + "\n")
            while let line = try keyboard.readLine() {
                if line.hasPrefix("rec ") || line.hasPrefix("cannot tell") { return line }
            }
            return "(no answer)"
        }
        #expect(try answer("is rec running?") == "rec is running (pid \(flock.pid))")
        flock.closeStdin()
        #expect(try flock.waitForExit() == 0)
        #expect(try answer("is rec running?") == "rec is not running")
    }
}
