import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// While the host stops (its state, not a flag), it answers but starts and
/// stops nothing more: each extension is already being stopped, once.
@Suite(.timed) struct HostStoppingTests {
    @Test func aStoppingHostAnswersButStartsAndStopsNothingMore() throws {
        let fixture = try HostFixture()
        // It ignores SIGTERM: the host's stop waits out its grace (long:
        // the checks below need no hurry), answering meanwhile.
        try writeFile(fixture.extensions + "/stubborn.extension.json", #"""
            {"name":"stubborn","role":"widget","executable":"/bin/sh","arguments":["-c","trap '' TERM; echo up; while :; do sleep 1; done"],"activation":"always","restart":"never"}
            """#)
        try writeFile(fixture.extensions + "/late.extension.json",
                      #"{"name":"late","role":"widget","executable":"/bin/sleep","arguments":["300"],"activation":"on-demand"}"#)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions, "--grace", "60"]))
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("[stubborn] up")
        // Its process group, as the host sees it (its own pid in a world of its own is 1).
        let stubborn = try #require((try fixture.status()["extensions"] as? [[String: Any]])?
            .first { $0["name"] as? String == "stubborn" }?["pid"] as? Int)
        let client = try fixture.rawClient()
        defer { client.close() }
        host.signal(SIGTERM)
        // Every connection hears it once the way down has begun.
        #expect(client.readLine()?.contains(#""method":"\#(HostNotification.stopping)""#) == true)
        let stop = try fixture.group.run(["extension", "stop", "stubborn"])
        #expect(stop.status == 1 && stop.stderr.contains("the host is stopping every extension"), "\(stop.stderr)")
        let start = try fixture.group.run(["extension", "start", "late"])
        #expect(start.status == 1 && start.stderr.contains("cannot start"), "\(start.stderr)")
        // Ended from outside, its whole group: the stop waits no longer.
        try #require(stubborn > 1)
        #expect(kill(-Int32(stubborn), SIGKILL) == 0)
        #expect(try host.waitForExit(timeout: 30) == 0)
    }
}
