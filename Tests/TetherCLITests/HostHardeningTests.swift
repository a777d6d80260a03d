import Foundation
import Testing
import CTetherSystem
import TetherTestSupport

/// Invariant 11: the host never traps or blocks on its own output, its peers
/// or its extensions. Each test puts the host in a situation real use
/// creates, then checks that it still answers `status` quickly. The hosts
/// here give their extensions no world of their own: the tests follow an
/// extension's processes by the pids its scripts print, which its own PID
/// namespace would hide (in a world, the kernel ends them with it:
/// ExtensionWorldTests).
@Suite(.timed) struct HostHardeningTests {
    /// Lines of about 1.2 KB as fast as the shell can: past the host's rate
    /// limit and its output queue within a second.
    static let chattyScript = #"line=$(printf '%01200d' 0); while :; do echo "chatty $line"; done"#

    /// `tether host ... | CONSUMER` in a shell; the host's pid from its lock.
    func startPipedHost(_ fixture: HostFixture, consumer: String) throws -> (shell: TestProcess, pid: Int32) {
        let tether = tetherExecutable
        let command = "exec 3>&1; '\(tether)' host --group '\(fixture.group.path)' --extensions-dir '\(fixture.extensions)'"
            + " --grace 2 | \(consumer)"
        let shell = try TestProcess("/bin/sh", ["-c", command])
        let ready = try fixture.group.run(["watch", "host", "--until", "running", "--timeout", "20"])
        #expect(ready.status == 0, "\(ready.stderr)")
        // The lock is taken a moment before the socket listens: ask until it answers (bounded).
        for _ in 0..<200 {
            let status = try fixture.group.run(["status", "--json"])
            if status.status == 0, let pid = try fixture.group.json(status)["pid"] as? Int { return (shell, Int32(pid)) }
        }
        throw TestTimeout(what: "the piped host to answer status")
    }

    /// Status answers, each within a bound far below the old multi-second stalls.
    func expectResponsive(_ fixture: HostFixture, times: Int = 10) throws -> [String: Any] {
        var last: [String: Any] = [:]
        for _ in 0..<times {
            let started = Date()
            let result = try fixture.group.run(["status", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 2, "status took \(Date().timeIntervalSince(started)) s")
            last = try fixture.group.json(result)
        }
        return last
    }

    /// Polls status (bounded by count and time) until `condition` holds.
    func waitForStatus(_ fixture: HostFixture, timeout: Double = 20,
                       _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = TestTimeout.deadline(after: timeout)
        var status: [String: Any] = [:]
        for _ in 0..<2_000 {
            status = try fixture.status()
            if condition(status) || Date() > deadline { break }
            // Each round is a real request to the host; no sleep needed.
        }
        return status
    }

    func stop(_ pid: Int32, _ shell: TestProcess) throws {
        kill(pid, SIGTERM)
        _ = try shell.waitForExit(timeout: 20)
    }

    @Test func hostWhoseStdoutClosesKeepsServing() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("chatty", restart: "always", script: Self.chattyScript)
        let (shell, pid) = try startPipedHost(fixture, consumer: "head -n 1 >/dev/null")
        // Lines keep coming after head has gone; a trapping write would end the host.
        let status = try waitForStatus(fixture) { ($0["droppedLogLines"] as? Int ?? 0) > 0 }
        #expect((status["droppedLogLines"] as? Int ?? 0) > 0, "the host wrote past its closed stdout")
        _ = try expectResponsive(fixture)
        #expect(processAlive(pid))
        #expect(try fixture.group.run(["feature", "start", "rec"]).status == 0)
        try stop(pid, shell)
    }

    @Test func hostWhoseStdoutIsNeverReadKeepsServing() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("chatty", restart: "always", script: Self.chattyScript)
        let reader = fixture.group.dir.path + "/reader.pid"
        let (shell, pid) = try startPipedHost(fixture, consumer: "sh -c 'echo $$ > \(reader); exec sleep 600'")
        let status = try waitForStatus(fixture) { ($0["droppedLogLines"] as? Int ?? 0) > 0 }
        #expect((status["droppedLogLines"] as? Int ?? 0) > 0, "the queue never filled: lines were not bounded")
        _ = try expectResponsive(fixture)
        #expect(try fixture.group.run(["feature", "start", "rec"]).status == 0)
        #expect(try fixture.group.run(["probe", "feature", "rec"]).status == 0)
        // The reader never reads: end it, then the host.
        let readerPID = Int32(try String(contentsOfFile: reader, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(readerPID > 0)
        kill(readerPID, SIGKILL)
        try stop(pid, shell)
    }

    @Test func aChattyExtensionIsRateLimitedAndCounted() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("spam", restart: "always", script: "exec yes spam")
        let host = try fixture.startHost(without: [.namespaces])
        let status = try waitForStatus(fixture) { status in
            let entry = (status["extensions"] as? [[String: Any]])?.first
            return (entry?["droppedLines"] as? Int ?? 0) > 0
        }
        let entry = (status["extensions"] as? [[String: Any]])?.first
        #expect((entry?["droppedLines"] as? Int ?? 0) > 0, "excess output is dropped and counted")
        _ = try expectResponsive(fixture)
        #expect(try host.stop() == 0)
    }

    @Test func watchEndsQuietlyWhenItsReaderGoes() throws {
        let group = try TestGroup()
        let tether = tetherExecutable
        // head takes the first line and exits; watch must notice and exit 0
        // at once, though the lock never changes again.
        let script = "'\(tether)' watch host --group '\(group.path)' | head -n 1; echo \"watch=${PIPESTATUS[0]}\""
        let shell = try TestProcess("/bin/bash", ["-c", script])
        _ = try shell.expectLine("not running")
        _ = try shell.expectLine("watch=0", timeout: 10)
        #expect(try shell.waitForExit() == 0)
    }

    /// Stop sends SIGTERM to the whole group at once: an extension that
    /// handles SIGTERM only after the child it waits on ends, ends as soon as
    /// that child does, not at the end of the grace (10 s here).
    @Test func stopSignalsTheWholeGroupAtOnce() throws {
        let fixture = try HostFixture()
        // sh runs its TERM trap only once its foreground child has ended.
        // The foreground child says "ready" itself, so it exists when the host is stopped.
        try fixture.addExtension("stubborn", script: #"trap 'echo "term"' TERM; sh -c 'echo ready; exec sleep 1000'; echo "done""#)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions, "--grace", "10"]), without: [.namespaces])
        _ = try host.expectLineStarting("[stubborn] ready")
        let started = Date()
        host.signal(SIGTERM)
        #expect(try host.waitForExit(timeout: 30) == 0)
        #expect(Date().timeIntervalSince(started) < 5, "stop took \(Date().timeIntervalSince(started)) s of a 10 s grace")
    }

    /// An SDK extension whose stdout reader has gone (the host killed, a
    /// `| head` by hand) carries on and exits cleanly: a trap there is slow
    /// (the runtime's backtracer) and loses the extension's last work.
    @Test func anSDKExtensionWithAClosedStdoutCarriesOnAndExitsCleanly() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHost(without: [.namespaces])
        let keyboard = exampleExecutable("example-keyboard")
        let script = "printf 'is recording running?\\nstart recording\\n' | '\(keyboard)' --group '\(fixture.group.path)'"
            + " | head -c 0; echo \"keyboard=${PIPESTATUS[1]}\""
        let shell = try TestProcess("/bin/bash", ["-c", script])
        _ = try shell.expectLine("keyboard=0", timeout: 20)
        #expect(try shell.waitForExit() == 0)
        // It did its work though nobody read a word of it (the feature then
        // ended with it: it has no open access).
        _ = try host.expectLineStarting("feature 'recording' started", timeout: 20)
        #expect(try host.stop() == 0)
    }

    /// kill -9 of the host: PDEATHSIG ends the extension's main process, and
    /// the group reaper ends what it started.
    @Test func losingTheHostEndsTheExtensionsBackgroundChildren() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("parent", script: #"sleep 1000 & echo "child $! of $$"; exec sleep 1000"#)
        let host = try fixture.startHost(without: [.namespaces])
        let line = try #require(try host.expectLineStarting("[parent] child").last)
        let words = line.split(separator: " ")
        let child = try #require(Int32(words[2]))
        let leader = try #require(Int32(words[4]))
        #expect(!processEnded(child))
        host.signal(SIGKILL)
        #expect(processEnded(leader, within: 10))
        // The fixture's grace is 2 s: SIGTERM at once, SIGKILL after it.
        #expect(processEnded(child, within: 10), "a background child outlived its host")
    }

    /// The host's group reaper is one process for the host's whole life; a
    /// killed one is replaced at the next launch, and the new one is told
    /// every group still running, so kill -9 of the host still ends them.
    @Test func aKilledGroupReaperIsReplacedAndGuardsEveryGroup() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("parent", script: #"sleep 1000 & echo "child $! of $$"; exec sleep 1000"#)
        try fixture.addExtension("later", restart: "always", script: #"echo "later $$"; exec sleep 1000"#)
        let host = try fixture.startHost(without: [.namespaces])
        var child: Int32 = 0, later: Int32 = 0
        for _ in 0..<20 where child == 0 || later == 0 {
            let line = try #require(try host.readLine())
            let words = line.split(separator: " ")
            if line.hasPrefix("[parent] child") { child = try #require(Int32(words[2])) }
            if line.hasPrefix("[later] later") { later = try #require(Int32(words[2])) }
        }
        #expect(child > 0 && later > 0)
        let reaper = try #require(groupReaper(of: host.pid), "no group reaper reads the host's pipe")
        kill(reaper, SIGKILL)
        #expect(processEnded(reaper, within: 10))
        // A launch tells the reaper of its group: the host finds it gone.
        kill(later, SIGKILL)
        _ = try host.expectLineStarting("[later] later")
        let replacement = try #require(groupReaper(of: host.pid), "the killed reaper was not replaced")
        #expect(replacement != reaper)
        host.signal(SIGKILL)
        #expect(processEnded(child, within: 10), "the replacement did not guard a group started before it")
        #expect(processEnded(replacement, within: 10), "the reaper outlived its work")
    }

    /// PR_SET_PDEATHSIG, set between fork and exec, ends an extension with
    /// its host even when no reaper is left to do it.
    @Test func withoutItsReaperAHostsDeathStillEndsItsExtensions() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("alone", script: #"echo "pid $$"; exec sleep 1000"#)
        let host = try fixture.startHost(without: [.namespaces])
        let line = try #require(try host.expectLineStarting("[alone] pid").last)
        let pid = try #require(Int32(line.split(separator: " ").last ?? ""))
        let reaper = try #require(groupReaper(of: host.pid), "no group reaper reads the host's pipe")
        kill(reaper, SIGKILL)
        #expect(processEnded(reaper, within: 10))
        host.signal(SIGKILL)
        #expect(processEnded(pid, within: 10), "the extension outlived its host")
    }

    @Test func extensionProcessGroupEndsWithItsExtension() throws {
        let fixture = try HostFixture()
        let script = #"sleep 1000 & echo "child $! of $$"; exec sleep 1000"#
        try fixture.addExtension("parent", script: script)
        try fixture.addExtension("crasher", restart: "always", script: script)
        let host = try fixture.startHost(without: [.namespaces])
        var children: [String: (child: Int32, leader: Int32)] = [:]
        for _ in 0..<2 {
            // An extension's own line, after the host's "started" ones.
            let line = try #require(try host.expectLineStarting("[").last)
            let name = String(line.dropFirst().prefix { $0 != "]" })
            let words = line.split(separator: " ")
            children[name] = (Int32(words[2]) ?? 0, Int32(words[4]) ?? 0)
        }
        let crasher = try #require(children["crasher"])
        let parent = try #require(children["parent"])
        #expect(!processEnded(crasher.child) && !processEnded(parent.child))
        // The crasher dies; the host restarts it, and what it left running goes.
        kill(crasher.leader, SIGKILL)
        _ = try host.expectLineStarting("[crasher] child")
        #expect(processEnded(crasher.child, within: 5), "a restart ends what the old instance left running")
        #expect(!processEnded(parent.child))
        #expect(try host.stop() == 0)
        #expect(processEnded(parent.child, within: 5), "stopping the host ends the extension's background child")
    }
}

/// A clean stop returns only once nothing of any extension is left: a
/// background child that ignores SIGTERM (killed at the grace), a grandchild,
/// and no daemon (setsid is refused to a confined launch); the reaper has
/// exited too.
@Suite(.timed, .waits) struct CleanStopTests {
    static let script = #"""
        (trap '' TERM; exec sleep 1000) &
        stubborn=$!
        sh -c 'sleep 1000 & echo "$!" > "$TMPDIR/grandchild"; wait' &
        while [ ! -s "$TMPDIR/grandchild" ]; do sleep 0.01; done
        if setsid true 2>/dev/null; then daemon=allowed; else daemon=refused; fi
        echo "tree $stubborn $(cat "$TMPDIR/grandchild") daemon $daemon"
        exec sleep 1000
        """#

    /// A host running the tree, and the pids of its stubborn child and its
    /// grandchild once both run. (A host left running dies with its TestProcess.)
    func startTree() throws -> (fixture: HostFixture, host: TestProcess, pids: [Int32]) {
        let fixture = try HostFixture()
        try fixture.addExtension("tree", script: Self.script)
        let host = try fixture.startHost(without: [.namespaces])
        let line = try #require(try host.expectLineStarting("[tree] tree", timeout: 20).last)
        let words = line.split(separator: " ")
        #expect(line.hasSuffix("daemon refused"), "a confined launch could leave its session: \(line)")
        return (fixture, host, [Int32(words[2]), Int32(words[3])].compactMap { $0 })
    }

    @Test func theHostReturnsWhenTheWholeTreeIsGone() throws {
        let (fixture, host, pids) = try startTree()
        defer { withExtendedLifetime(fixture) { host.signal(SIGKILL) } }
        #expect(pids.count == 2 && pids.allSatisfy { !processEnded($0) })
        let reaper = try #require(groupReaper(of: host.pid))
        host.signal(SIGTERM)
        #expect(try host.waitForExit(timeout: 30) == 0)
        // At once: nothing may still be on its way out.
        for pid in pids { #expect(processEnded(pid), "\(pid) outlived the host's stop") }
        #expect(processEnded(reaper), "the reaper outlived the host's stop")
    }

    @Test func extensionStopAnswersWhenTheWholeTreeIsGone() throws {
        let (fixture, host, pids) = try startTree()
        defer { host.signal(SIGKILL) }
        let stop = try fixture.group.run(["extension", "stop", "tree"])
        #expect(stop.status == 0 && stop.stdout == "tree stopped\n", "\(stop.stderr)")
        for pid in pids { #expect(processEnded(pid), "\(pid) outlived 'extension stop'") }
    }

    /// Its main process already gone, a child that ignores SIGTERM still in
    /// its grace: a stop that comes then answers once that child is gone too.
    @Test func aStopAfterTheExitWaitsForTheLeftovers() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("left", restart: "never", script: #"""
            (trap '' TERM; echo > "$TMPDIR/ignoring"; exec sleep 1000) &
            while [ ! -e "$TMPDIR/ignoring" ]; do sleep 0.01; done
            echo "left $!"
            """#)
        let host = try fixture.startHost(without: [.namespaces])
        defer { host.signal(SIGKILL) }
        let lines = try host.expectLineStarting("[left] left ", timeout: 20)
        let child = try #require(lines.last?.split(separator: " ").last.flatMap { Int32($0) })
        // Its exit can be told before the output it wrote last is read (the
        // pidfd and the pipe are two events): either order.
        let exited = "extension 'left' exited with status 0"
        if !lines.contains(where: { $0.hasPrefix(exited) }) { _ = try host.expectLineStarting(exited, timeout: 20) }
        #expect(!processEnded(child))
        let stop = try fixture.group.run(["extension", "stop", "left"])
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(processEnded(child), "'extension stop' answered while \(child) was still in its grace")
    }
}

/// The group reaper of the host `pid`: the `tether-reaper` whose
/// descriptor 3 is a pipe the host also holds (the write end).
func groupReaper(of host: Int32) -> Int32? {
    let files = FileManager.default
    let hostPipes = ((try? files.contentsOfDirectory(atPath: "/proc/\(host)/fd")) ?? [])
        .compactMap { try? files.destinationOfSymbolicLink(atPath: "/proc/\(host)/fd/\($0)") }
        .filter { $0.hasPrefix("pipe:") }
    for entry in (try? files.contentsOfDirectory(atPath: "/proc")) ?? [] {
        guard let pid = Int32(entry),
              (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "tether-reaper\n",
              let link = try? files.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/3"),
              hostPipes.contains(link)
        else { continue }
        return pid
    }
    return nil
}

