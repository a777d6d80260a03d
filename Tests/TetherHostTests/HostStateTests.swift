import Glibc
import Logging
import Testing
import TetherGroup
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// A host's life goes one way: made, started once, stopped. One that never
/// started holds nothing, so its stop touches nothing of its group (a
/// running host's, maybe); and a stopped one does not start again.
@Suite struct HostStateTests {
    @Test func anUnstartedHostStopsAtOnceTouchingNothingAndNeverStartsAfter() throws {
        let scratch = try TemporaryDirectory("tether-host-state")
        try #require(mkdir(scratch.group, 0o700) == 0 && mkdir(scratch.group + "/locks", 0o700) == 0)
        let group = try GroupDirectory(path: scratch.group)
        // Another host's mark that the group is full.
        let marker = GroupDirectory.fullMarkerPath(of: group.path)
        try writeFile(marker, "")
        let host = Host(loop: try EventLoop(), configuration: .init(group: group, manifests: [], logger: Logger(label: "test")))
        var stopped = 0
        host.shutdown { stopped += 1 }
        #expect(stopped == 1)
        #expect(access(marker, F_OK) == 0, "the stop of a host that never started removed the group's marker")
        #expect(host.isStopping)
        #expect(throws: HostError.self) { try host.start() }
        do {
            try host.start()
        } catch {
            #expect(error.description.contains("a host starts once"))
        }
    }
}
