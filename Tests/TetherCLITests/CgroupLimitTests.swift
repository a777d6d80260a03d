import Foundation
import Testing
import TetherTestSupport

/// Where the memory and pids controllers are delegated (the VM tier:
/// scripts/vm-tests.sh), the launch's cgroup holds the limits: memory.max
/// counts everything (so a hog is killed at it, and its exit says why).
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
        try waitFor("the hog's end", timeout: 120) {
            entry = (try? fixture.status()["extensions"] as? [[String: Any]])?.first ?? [:]
            return entry["lastExit"] is [String: Any]
        }
        #expect((entry["lastExit"] as? [String: Any])?["reason"] as? String == "memory", "\(entry)")
        #expect((entry["sandbox"] as? [String: Any])?["memoryBy"] as? String == "cgroup", "\(entry)")
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
