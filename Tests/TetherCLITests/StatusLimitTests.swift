import Foundation
import Testing
import TetherIPC
import TetherJSON
import TetherTestSupport

/// `status --limit N` (issue 58): a status bar polling a host that runs
/// thousands asks for few. The first N are listed, all are counted, and a
/// limit that is no whole number of 0 or more is refused with why.
@Suite(.timed) struct StatusLimitTests {
    @Test func theFirstAreListedAndAllCounted() throws {
        let fixture = try HostFixture()
        let names = ["a1", "b2", "c3", "d4", "e5"]
        for name in names {
            try writeFile("\(fixture.extensions)/\(name).extension.json",
                          #"{"name":"\#(name)","role":"widget","executable":"/bin/true","activation":"on-demand"}"#)
        }
        try fixture.withHost { _ in
            func listed(_ arguments: [String]) throws -> (names: [String], count: Int?) {
                let status = try fixture.group.json(try fixture.group.run(["status", "--json"] + arguments))
                let extensions = (status["extensions"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                return (extensions, status["extensionCount"] as? Int)
            }
            #expect(try listed([]) == (names, 5))
            #expect(try listed(["--limit", "2"]) == (["a1", "b2"], 5))
            #expect(try listed(["--limit", "0"]) == ([], 5))
            #expect(try listed(["--limit", "9"]) == (names, 5))
            let text = try fixture.group.run(["status", "--limit", "2"])
            #expect(text.status == 0 && text.stdout.contains("\n  and 3 more (without --limit: all of them)\n"), "\(text.stdout)")
            // As a listed line: the group's random path may hold "c3" too.
            #expect(!text.stdout.contains("\n  c3 "), "\(text.stdout)")

            let refused = try fixture.group.run(["status", "--limit=-1"])
            #expect(refused.status == 2 && refused.stderr.contains("--limit must be 0 or more"), "\(refused.stderr)")
            // On the wire: what is no whole number of 0 or more is refused, with the field.
            let client = try fixture.rawClient()
            defer { client.close() }
            for (index, limit) in ["-1", "1.5", #""2""#].enumerated() {
                let request = #"{"jsonrpc":"2.0","id":\#(index),"method":"\#(HostMethod.status)","params":{"limit":\#(limit)}}"#
                client.send(Array(request.utf8) + [0x0a])
                let answer = try JSONCodec.parse(Array((client.readLine() ?? "").utf8))
                #expect(answer["error"]?["message"]?.stringValue?.contains("\"limit\" must be a whole number, 0 or more") == true,
                        "\(limit): \(answer)")
            }
        }
    }

    /// `status --timeout SECONDS`: how long it waits for the host's answer
    /// (a stopped host here), and it says so; 0 or no number is refused.
    @Test func theWaitForAnAnswerIsTheUsersToSet() throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            host.signal(SIGSTOP)
            defer { host.signal(SIGCONT) }
            let started = Date()
            let waited = try fixture.group.run(["status", "--timeout", "0.5"])
            let elapsed = Date().timeIntervalSince(started)
            #expect(waited.status == 3 && waited.stderr.contains("the host did not answer within 0.5 seconds"), "\(waited.stderr)")
            #expect(elapsed < 4 * TestTimeout.scale, "gave up after \(elapsed) s, not the default 5")
            for bad in ["0", "soon"] {
                let refused = try fixture.group.run(["status", "--timeout", bad])
                #expect(refused.status == 2 && refused.stderr.contains("--timeout"), "\(bad): \(refused.stderr)")
            }
        }
    }
}
