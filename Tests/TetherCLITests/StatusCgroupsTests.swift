import Foundation
import Testing
import TetherTestSupport

/// Issue 57: where the host's extensions get no cgroup of their own (no
/// delegated cgroup, and no user service manager on D-Bus to ask for a
/// scope), `status` says so in one line with the fix, and `--json` carries
/// it; where they do, the line says under which cgroup.
@Suite(.timed) struct StatusCgroupsTests {
    @Test func statusSaysWhetherExtensionsHaveCgroupsAndTheFixWhereNot() throws {
        let fixture = try HostFixture()
        try fixture.withHost { _ in
            let status = try fixture.group.json(try fixture.group.run(["status", "--json"]))
            let cgroups = try #require(status["cgroups"] as? [String: Any], "\(status)")
            let text = try fixture.group.run(["status"])
            let lines = text.stdout.split(separator: "\n").filter { $0.hasPrefix("cgroups: ") }
            #expect(lines.count == 1, "\(text.stdout)")
            let line = String(lines.first ?? "")
            if cgroups["delegated"] as? Bool == true {
                #expect(line.contains("each extension in its own under \(cgroups["path"] as? String ?? "?")"), "\(line)")
            } else {
                #expect(line.hasPrefix("cgroups: none, so memory by RLIMIT_DATA and no pids cap: "), "\(line)")
                let fix = try #require(cgroups["fix"] as? String, "\(cgroups)")
                #expect(line.hasSuffix("; fix: \(fix)"), "\(line)")
                #expect((cgroups["reason"] as? String)?.isEmpty == false)
            }
        }
    }
}
