import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// While the host stops (its state, not a flag), it answers but starts and
/// stops nothing more: each extension is already being stopped, once.
@Suite(.timed) struct HostStoppingTests {
    @Test(.waits) func aStoppingHostAnswersButStartsAndStopsNothingMore() throws {
        let fixture = try HostFixture()
        // It ignores SIGTERM: the host's stop waits out its grace, answering meanwhile.
        try writeFile(fixture.extensions + "/stubborn.extension.json", #"""
            {"name":"stubborn","role":"widget","executable":"/bin/sh","arguments":["-c","trap '' TERM; echo up; while :; do sleep 1; done"],"activation":"always","restart":"never"}
            """#)
        try writeFile(fixture.extensions + "/late.extension.json",
                      #"{"name":"late","role":"widget","executable":"/bin/sleep","arguments":["300"],"activation":"on-demand"}"#)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions, "--grace", "5"]))
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("[stubborn] up")
        let client = try fixture.rawClient()
        defer { client.close() }
        host.signal(SIGTERM)
        // Every connection hears it once the way down has begun.
        #expect(client.readLine()?.contains(#""method":"\#(HostNotification.stopping)""#) == true)
        let stop = try fixture.group.run(["extension", "stop", "stubborn"])
        #expect(stop.status == 1 && stop.stderr.contains("the host is stopping every extension"), "\(stop.stderr)")
        let start = try fixture.group.run(["extension", "start", "late"])
        #expect(start.status == 1 && start.stderr.contains("cannot start"), "\(start.stderr)")
        #expect(try host.waitForExit(timeout: 30) == 0)
    }
}
