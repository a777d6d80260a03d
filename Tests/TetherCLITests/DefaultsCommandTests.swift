import Foundation
import Testing
import TetherTestSupport

@Suite(.timed) struct DefaultsCommandTests {
    @Test func setGetListDeleteWithTheContractsExitCodes() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "theme", #""dark""#]).status == 0)
        #expect(try group.run(["defaults", "set", "count", "3"]).status == 0)
        #expect(try group.run(["defaults", "get", "theme"]).stdout == "\"dark\"\n")
        #expect(try group.run(["defaults", "list"]).stdout == "count = 3\ntheme = \"dark\"\n")
        #expect(try group.json(try group.run(["defaults", "list", "--json"]))["count"] as? Int == 3)
        #expect(try group.run(["defaults", "delete", "count"]).status == 0)
        let missing = try group.run(["defaults", "get", "count"])
        #expect(missing.status == 1 && missing.stderr.contains("no value for key 'count'"))
        #expect(try group.run(["defaults", "delete", "count"]).status == 1)
        let bad = try group.run(["defaults", "set", "theme", "dark"])
        #expect(bad.status == 2 && bad.stderr.contains("not JSON"))
        #expect(try group.run(["defaults", "set", "", "1"]).status == 2)
        #expect(try group.run(["defaults", "get", "theme"]).stdout == "\"dark\"\n", "a refused write loses nothing")
    }

    @Test func anotherProcessIsToldOfAChange() throws {
        let group = try TestGroup()
        let watch = try group.start(["defaults", "watch", "--json"])
        try watch.expectLine(#"{"watching":true}"#)
        #expect(try group.run(["defaults", "set", "featured", #"["1042"]"#]).status == 0)
        #expect(try watch.readLine() == #"{"changed":["featured"]}"#)
        #expect(try group.run(["defaults", "set", "featured", #"["1042"]"#]).status == 0, "an unchanged value writes nothing")
        #expect(try group.run(["defaults", "set", "theme", "1"]).status == 0)
        #expect(try watch.readLine() == #"{"changed":["theme"]}"#)
        watch.signal(SIGTERM)
        #expect(try watch.waitForExit() == 0)
    }

    @Test func killNineDuringWritesLeavesAWholeFile() throws {
        let group = try TestGroup()
        let writer = try TestProcess(exampleExecutable("SDKFixture"), ["upsert-stress", "--prefix", "w", "--count", "100000", "--group", group.path])
        try writer.expectLine("ready", timeout: 30)
        writer.writeStdin("go\n")
        // Kill once the store has been replaced a few times, at whatever
        // instant of a write the writer is then in.
        try writer.expectLine("wrote 20", timeout: 30)
        writer.signal(SIGKILL)
        #expect(try writer.waitForExit() == 128 + SIGKILL)
        let data = try Data(contentsOf: URL(fileURLWithPath: group.credentialsPath))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keys = Set(object.keys)
        #expect(keys == Set((0..<keys.count).map { "stress.w.\($0)" }), "a prefix of the writes, none torn")
        #expect(try group.run(["token", "status"]).status == 0)
    }
}
