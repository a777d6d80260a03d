import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// Where the memory and pids controllers are delegated (the VM tier:
/// scripts/vm-tests.sh), the launch's cgroup holds the limits: memory.max
/// counts everything (so a hog is killed at it, and its exit says why) and
/// pids.max stops a fork bomb, while the host answers throughout.
extension CgroupTests {
    @Test(.enabled(if: TestCgroup.offers("memory"), "needs the memory controller delegated (the VM tier)"))
    func aHogIsKilledAtItsMemoryLimitAndItsExitSaysSo() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        // Shared memory too, which RLIMIT_DATA alone would not count.
        try writeFile(fixture.extensions + "/hog.py", """
            import mmap
            chunks = []
            for i in range(512):
                chunk = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_SHARED)
                chunk.write(b"x" * (1 << 20))
                chunks.append(chunk)
            print("NO LIMIT", flush=True)
            """)
        try writeFile(fixture.extensions + "/hog.extension.json", #"{"name":"hog","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/hog.py"],"memoryLimitMiB":64,"restart":"never","activation":"always"}"#)
        let host = try startHost(fixture, in: cgroup)
        defer { host.signal(SIGTERM) }
        var entry: [String: Any] = [:]
        // Every status is answered within its wait (5 s, scaled as every
        // wait is in the VM tier's slower guest) while the hog grows.
        var misses: [String] = []
        try waitFor("the hog's end", timeout: 120) {
            let status: [String: Any]
            do {
                status = try fixture.status()
            } catch {
                misses.append("\(error)")
                return false
            }
            entry = (status["extensions"] as? [[String: Any]])?.first ?? [:]
            return entry["lastExit"] is [String: Any]
        }
        #expect(misses.isEmpty, "status went unanswered while the hog grew: \(misses)")
        #expect((entry["lastExit"] as? [String: Any])?["reason"] as? String == "memory", "\(entry)")
        #expect((entry["sandbox"] as? [String: Any])?["memoryBy"] as? String == "cgroup", "\(entry)")
    }

    /// Each child becomes a small `sleep` (and no memory limit is set), so
    /// the pids cap, not memory, is what stops it.
    @Test(.enabled(if: TestCgroup.offers("pids"), "needs the pids controller delegated (the VM tier)"))
    func aForkBombStopsAtThePidsCapWhileTheHostAnswers() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/bomb.py", """
            import os
            born = 0
            try:
                for i in range(4096):
                    if os.fork() == 0:
                        os.execv("/bin/sleep", ["sleep", "1000"])
                    born += 1
            except OSError:
                pass
            print("BORN", born, flush=True)
            os.execv("/bin/sleep", ["sleep", "1000"])
            """)
        try writeFile(fixture.extensions + "/bomb.extension.json", #"{"name":"bomb","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/bomb.py"],"memoryLimitMiB":0,"restart":"never","activation":"always"}"#)
        let host = try startHost(fixture, in: cgroup)
        defer { host.signal(SIGTERM) }
        // Asked throughout on one connection, each answer within 30 s, until
        // the kernel has refused it a fork: the bomb then says how many it
        // made (waited for between questions). A CLI per question would
        // measure its own start under the bomb on the VM tier's emulated
        // CPUs, not the host; and CI runs the systemd tier's VM beside
        // this one (an answer once took over 15 s there, 26 s the test alone).
        let client = try fixture.rawClient()
        defer { client.close() }
        var unanswered = 0
        var slowest = 0.0
        var own: String?
        var born: String?
        let deadline = TestTimeout.deadline(after: 150)
        for id in 1...2_000 where born == nil && Date() < deadline {
            client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(HostMethod.status)"}"#.utf8) + [0x0a])
            let asked = Date()
            defer { slowest = max(slowest, Date().timeIntervalSince(asked)) }
            var answer: [String: Any]?
            for _ in 0..<16 {
                guard let line = client.readLine(timeout: 30_000) else { break }
                let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
                if object?["id"] as? Int == id { answer = object?["result"] as? [String: Any]; break }
            }
            guard let status = answer else { unanswered += 1; continue }
            own = own ?? ((status["extensions"] as? [[String: Any]])?.first?["sandbox"] as? [String: Any])?["cgroup"] as? String
            if let line = (try? host.readLine(timeout: 0.2)) ?? nil, line.hasPrefix("[bomb] BORN ") { born = line }
        }
        #expect(unanswered == 0, "status went unanswered \(unanswered) times during the fork bomb (slowest answer \(slowest) s)")
        let line = try #require(born, "the bomb never reached the cap")
        let made = Int(line.split(separator: " ").last ?? "") ?? -1
        #expect(made > 0 && made < 512, "\(line)")
        // The kernel counted the refused forks.
        let events = try String(contentsOfFile: cgroup.mount + (try #require(own)) + "/pids.events", encoding: .utf8)
        #expect(events.split(separator: "\n").contains { $0.hasPrefix("max ") && $0 != "max 0" }, "\(events)")
        #expect(try fixture.status()["extensions"] is [[String: Any]], "the host answers")
    }

    /// `tether doctor` run in a delegated cgroup says the cgroup holds
    /// memory and pids.
    @Test(.enabled(if: TestCgroup.offers("memory") && TestCgroup.offers("pids"), "needs both controllers delegated (the VM tier)"))
    func doctorSaysADelegatedCgroupHoldsMemoryAndPids() throws {
        let cgroup = try TestCgroup(delegated: true)
        let doctor = try TestProcess("/bin/sh", ["-c", #"echo $$ > "$0/cgroup.procs" && exec "$@""#, cgroup.directory,
                                                 tetherExecutable, "doctor", "--json"])
        let output = try doctor.remainingOutput(timeout: 60)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let findings = (json["mechanisms"] as? [[String: Any]]) ?? []
        func finding(_ name: String) -> [String: Any] { findings.first { $0["mechanism"] as? String == name } ?? [:] }
        #expect(finding("cgroup")["enforced"] as? Bool == true, "\(findings)")
        #expect((finding("memory")["detail"] as? String)?.hasPrefix("memory.max") == true, "\(findings)")
        #expect(finding("pids")["enforced"] as? Bool == true, "\(findings)")
    }
}

extension TestCgroup {
    /// Whether a test cgroup made here gets `controller` from its parent.
    static func offers(_ controller: String) -> Bool {
        guard let probe = try? TestCgroup(delegated: false) else { return false }
        let offered = (try? String(contentsOfFile: probe.directory + "/cgroup.controllers", encoding: .utf8)) ?? ""
        return offered.split(whereSeparator: { $0 == " " || $0 == "\n" }).contains { $0 == controller }
    }
}
