import Foundation
import Testing
import TetherTestSupport

/// The group's shared parts (`shared/`, `stores/`) have a size the host
/// counts (`--group-limit`): past it the group is marked full and every
/// writer that would add refuses with a clear error, whoever wrote what
/// filled it; back under, writes go again. A writer that ignores the mark
/// is stopped past twice the limit.
@Suite(.timed) struct GroupSizeTests {
    @Test func aFullGroupRefusesWritesThatAddUntilFilesGo() throws {
        let fixture = try HostFixture()
        try fixture.withHost(arguments: ["--group-limit", "1"]) { host in
            #expect(try fixture.group.run(["defaults", "set", "small", "1"]).status == 0)
            let big = fixture.group.path + "/shared/big"
            try writeFile(big, String(repeating: "x", count: 3 << 19), mode: 0o600)  // 1.5 MiB
            try host.waitForError(containing: "the group's shared/, stores/, tallies/ and secrets hold 1 MiB, more than its limit of 1 MiB", timeout: 20)
            let refused = try fixture.group.run(["defaults", "set", "more", #""a value""#])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("is full: what its extensions may write holds more than its host allows"), "\(refused.stderr)")
            #expect(try fixture.group.run(["defaults", "get", "more"]).status == 1, "nothing was stored")
            // What shrinks the store still goes: values can be removed.
            #expect(try fixture.group.run(["defaults", "delete", "small"]).status == 0)
            #expect(unlink(big) == 0)
            _ = try host.expectLineStarting("the group's shared/, stores/, tallies/ and secrets are back under their limit", timeout: 20)
            #expect(try fixture.group.run(["defaults", "set", "more", #""a value""#]).status == 0)

        }
    }

    /// An extension that writes past the mark (not through the SDK) is
    /// stopped with exit reason `disk` once the group holds twice its limit;
    /// the mark goes with the host.
    @Test func aWriterIgnoringTheMarkIsStoppedPastTwiceTheLimit() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/filler.py", """
            import os, time
            with open(os.path.join(os.environ["TETHER_GROUP"], "shared", "filler"), "wb") as out:
                for _ in range(64):
                    out.write(b"x" * 65536)
                    out.flush()
                    time.sleep(0.02)
            time.sleep(60)
            """)
        try writeFile(fixture.extensions + "/filler.extension.json",
                      #"{"name":"filler","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/filler.py"],"activation":"on-demand","restart":"never"}"#)
        try fixture.withHost(arguments: ["--group-limit", "1"]) { host in
            #expect(try fixture.group.run(["extension", "start", "filler"], timeout: 30).status == 0)
            try host.waitForError(containing: "extension 'filler' may write the group, whose shared/, stores/, tallies/ and secrets hold", timeout: 30)
            var last: [String: Any] = [:]
            try waitFor("filler's exit", timeout: 30) {
                let list = (try? fixture.status()["extensions"] as? [[String: Any]]) ?? nil
                last = list?.first { $0["name"] as? String == "filler" }?["lastExit"] as? [String: Any] ?? [:]
                return !last.isEmpty
            }
            #expect(last["reason"] as? String == "disk", "\(last)")
            // Marked full (the same count that stopped it).
            #expect(access(fixture.group.path + "/locks/group-full", F_OK) == 0)
        }
        // No mark of a count outlives the host that counted.
        #expect(access(fixture.group.path + "/locks/group-full", F_OK) != 0)
    }
}
