import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// Issue 58: descriptors go to what runs, not to every manifest. Under a
/// tight limit with many manifests, clients keep their floor (none evicts
/// another), status says how many extensions may run at once, and one past
/// that is refused at once with the fix, then starts once another ends.
@Suite(.timed) struct DescriptorBudgetTests {
    @Test func manyManifestsUnderATightLimitLeaveRoomForClientsAndSayHowManyMayRun() throws {
        let fixture = try HostFixture()
        // SDK widgets: a start is answered at their hello.
        let widget = exampleExecutable("example-widget")
        for index in 0..<40 {
            try writeFile("\(fixture.extensions)/e\(index).extension.json",
                          #"{"name":"e\#(index)","role":"widget","executable":"\#(widget)","#
                          + #""arguments":["--entries","1","--policy","never"],"activation":"on-demand"}"#)
        }
        // The hard limit too: the host cannot raise its way out.
        let host = try TestProcess("/bin/sh", ["-c", "ulimit -n 600 && exec '\(tetherExecutable)' host --group '\(fixture.group.path)'"
                                                + " --extensions-dir '\(fixture.extensions)' --grace 2"],
                                   environment: fixture.group.environment)
        defer { host.stopAlways() }
        _ = try host.expectLineStarting("tether host ready")
        let limits = try #require(try fixture.status()["limits"] as? [String: Any])
        let clients = try #require(limits["maximumConnections"] as? Int)
        let running = try #require(limits["maximumRunningExtensions"] as? Int)
        #expect(clients >= 64, "\(limits)")
        #expect(running > 0 && running < 40, "\(limits)")

        // Clients at once, each answered: none evicts another.
        var peers: [RawClient] = []
        defer { for peer in peers { peer.close() } }
        for _ in 0..<16 { peers.append(try fixture.rawClient()) }
        for (index, peer) in peers.enumerated() {
            peer.send(Array(#"{"jsonrpc":"2.0","id":\#(index),"method":"\#(HostMethod.ping)"}"#.utf8 + [10]))
        }
        for peer in peers { #expect(peer.readLine()?.contains("\"result\"") == true) }

        // As many as may run, then one more: refused at once, saying why.
        for index in 0..<running {
            #expect(try fixture.group.run(["extension", "start", "e\(index)"]).status == 0, "e\(index)")
        }
        let refused = try fixture.group.run(["extension", "start", "e\(running)"])
        #expect(refused.status == 1 && refused.stderr.contains("descriptor limit") && refused.stderr.contains("ulimit -n"),
                "\(refused.stderr)")
        // One ends: the next has its room.
        #expect(try fixture.group.run(["extension", "stop", "e0"]).status == 0)
        #expect(try fixture.group.run(["extension", "start", "e\(running)"]).status == 0)
        #expect(try host.stop() == 0)
    }
}
