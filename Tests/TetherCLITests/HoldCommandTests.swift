import Foundation
import Testing
import TetherTestSupport

@Suite(.timed) struct HoldCommandTests {
    @Test func heldWhileTheCommandRunsAndReleasedAfter() throws {
        let group = try TestGroup()
        let holder = try group.startHold(["feature", "rec"], ["sh", "-c", "echo ready; exec cat"])
        try holder.expectLine("ready")

        let probe = try group.run(["probe", "feature", "rec", "--json"])
        #expect(probe.status == 0)
        let object = try group.json(probe)
        #expect(object["running"] as? Bool == true)
        #expect(object["pid"] as? Int == Int(holder.pid))
        #expect((object["since"] as? String)?.hasSuffix("Z") == true)
        #expect(object["lock"] as? String == group.featureLock("rec"))

        let second = try group.run(["hold", "feature", "rec", "--", "true"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(holder.pid))"))

        holder.closeStdin()  // cat ends, so the hold ends
        #expect(try holder.waitForExit() == 0)
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)
    }

    @Test func exitStatusOfTheCommandIsPassedThrough() throws {
        let group = try TestGroup()
        #expect(try group.run(["hold", "host", "--", "sh", "-c", "exit 5"]).status == 5)
        #expect(try group.run(["hold", "host", "--", "true"]).status == 0)
    }

    /// The command starts with SIGPIPE at its default (tether itself ignores
    /// it) and with no signal blocked; a command killed by a signal gives
    /// 128 + N, as a shell reports it.
    @Test func commandGetsDefaultSignalsAndItsSignalDeathIs128PlusN() throws {
        let group = try TestGroup()
        let piped = try group.run(["hold", "host", "--", "sh", "-c", "kill -PIPE $$; echo survived"])
        #expect(piped.status == 128 + SIGPIPE, "\(piped.stdout)")
        #expect(!piped.stdout.contains("survived"))
        // (grep itself: a shell would clear its mask.)
        let blocked = try group.run(["hold", "host", "--", "grep", "^SigBlk", "/proc/self/status"])
        #expect(blocked.stdout == "SigBlk:\t0000000000000000\n")
        #expect(try group.run(["hold", "host", "--", "sh", "-c", "kill -KILL $$"]).status == 128 + SIGKILL)
    }

    /// A parent that ignores SIGCHLD and SIGINT and blocks SIGTERM and
    /// SIGHUP (a script, or a thread of a Swift or Dispatch program) passes
    /// that on through exec. hold still sees its command end, the command
    /// still starts with nothing ignored or blocked, and a SIGTERM to hold
    /// still reaches it.
    @Test func aParentsIgnoredAndBlockedSignalsChangeNothing() throws {
        let group = try TestGroup()
        let wrapper = """
            import os, signal, sys
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGHUP])
            os.execv(sys.argv[1], sys.argv[1:])
            """
        let hold = [tetherExecutable, "hold", "host", "--group", group.path, "--"]
        let status = try runCommand("/usr/bin/env", ["python3", "-c", wrapper] + hold + ["grep", "^Sig[BI]", "/proc/self/status"],
                                    timeout: 10)
        #expect(status.status == 0, "\(status.stderr)")
        let masks = status.stdout.split(separator: "\n").map { $0.split(separator: "\t") }
        #expect(masks.count == 2 && masks[0] == ["SigBlk:", "0000000000000000"], "\(status.stdout)")
        // Signals 1–31 at their defaults. (glibc's posix_spawn, like every
        // program's, leaves its own two real-time signals, 32 and 33, ignored.)
        let ignored = masks.count == 2 && masks[1].count == 2 ? UInt64(masks[1][1], radix: 16) : nil
        #expect(ignored.map { $0 & 0x7fff_ffff } == 0, "\(status.stdout)")
        let holder = try TestProcess("/usr/bin/env", ["python3", "-c", wrapper] + hold + ["sh", "-c", "echo ready; exec sleep 60"])
        try holder.expectLine("ready")
        holder.signal(SIGTERM)
        #expect(try holder.waitForExit() == 128 + SIGTERM)
    }

    @Test func missingCommandIsBadInput() throws {
        let group = try TestGroup()
        let result = try group.run(["hold", "host", "--", "/nonexistent/command"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("command not found"))
        #expect(try group.run(["probe", "host"]).status == 1)
    }

    /// A name PATH finds only as a file that may not be run is "permission
    /// denied", as execvp says (`ExecutableSearchTests`: the search itself).
    @Test func aCommandFoundOnlyAsAnUnrunnableFileIsPermissionDenied() throws {
        let group = try TestGroup()
        let bin = group.dir.path + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try writeFile(bin + "/data", "not a program\n", mode: 0o644)
        let hold = try runCommand("/usr/bin/env", ["PATH=" + bin + ":/usr/bin:/bin", tetherExecutable, "hold", "feature", "search",
                                                   "--group", group.path, "--", "data"])
        #expect(hold.status == 2 && hold.stderr.contains("cannot run data: permission denied"), "\(hold.stderr)")
    }

    /// Invariant 1: the command does not inherit the lock's descriptor.
    @Test func commandDoesNotInheritTheLock() throws {
        let group = try TestGroup()
        let result = try group.run(["hold", "feature", "rec", "--", "sh", "-c",
                                    "for f in /proc/$$/fd/*; do readlink $f || true; done"])
        #expect(result.status == 0)
        #expect(!result.stdout.isEmpty)
        #expect(!result.stdout.contains("rec.lock"))
    }

    /// What the caller passed down (`3>FILE`) reaches the command, as with
    /// flock(1) or a shell: only Tether's own descriptors stay behind.
    @Test func commandInheritsWhatTheCallerPassedIt() throws {
        let group = try TestGroup()
        let file = group.dir.path + "/passed"
        let hold = "\(tetherExecutable) hold feature rec --group '\(group.path)' -- sh -c 'echo kept >&3'"
        let result = try runCommand("/bin/sh", ["-c", "exec 3>'\(file)'; exec \(hold)"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "kept\n")
    }

    @Test func sigtermReachesTheCommand() throws {
        let group = try TestGroup()
        let holder = try group.startHold(["feature", "rec"], [
            "sh", "-c", "trap 'kill $pid; exit 42' TERM; sleep 60 & pid=$!; echo ready; wait $pid",
        ])
        try holder.expectLine("ready")
        holder.signal(SIGTERM)
        #expect(try holder.waitForExit() == 42)
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)
    }

    /// kill -9 the holder while its command lives on: the lock goes with the
    /// holder (the command never had it), probes say so at once, and a
    /// watcher wakes.
    @Test func killNineOfTheHolderReadsNotRunningAtOnceAndWakesWatchers() throws {
        let group = try TestGroup()
        let watcher = try group.start(["watch", "feature", "rec"])
        try watcher.expectLine("not running")
        let holder = try group.startHold(["feature", "rec"], ["sh", "-c", "echo $$; exec sleep 60"])
        let firstLine = try holder.readLine() ?? ""
        let childPID = try #require(Int32(firstLine))
        defer { kill(childPID, SIGKILL) }
        try watcher.expectLine("running")

        holder.signal(SIGKILL)
        #expect(try holder.waitForExit() == 128 + SIGKILL)
        let probe = try group.run(["probe", "feature", "rec"])
        #expect(probe.status == 1, "probe right after the holder was reaped")
        try watcher.expectLine("not running", timeout: 5)
        #expect(processAlive(childPID), "the command outlived its holder")
        watcher.signal(SIGINT)
        #expect(try watcher.waitForExit() == 0)
    }

    @Test func waitingHoldGetsTheLockWhenTheHolderEnds() throws {
        let group = try TestGroup()
        let first = try group.startHold(["host"], ["sh", "-c", "echo ready; exec cat"])
        try first.expectLine("ready")

        let refused = try group.run(["hold", "host", "--wait", "0.2", "--", "true"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("already running"))

        let second = try group.startHold(["host"], ["sh", "-c", "echo got-it"], extra: ["--wait", "20"])
        first.closeStdin()
        #expect(try first.waitForExit() == 0)
        try second.expectLine("got-it")
        #expect(try second.waitForExit() == 0)
    }
}
