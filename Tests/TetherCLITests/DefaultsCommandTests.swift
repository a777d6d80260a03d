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

    /// A relative --group is placed in the working directory; where that
    /// cannot be read (removed, or named in bytes that are not UTF-8), it
    /// is refused, never made from `/` (it made `/NAME`) or in a directory
    /// of another name (U+FFFD for each byte).
    @Test(arguments: ["removed", "not UTF-8"])
    func aRelativeGroupWithoutAReadableWorkingDirectoryIsRefused(_ directory: String) throws {
        let dir = try TemporaryDirectory("tether-cli")
        let name = "tether-relative-\(getpid())-\(directory.count)"
        defer { rmdir("/" + name) }  // only where the refusal failed
        let enter = directory == "removed" ? #"d="$1/gone"; mkdir "$d" && cd "$d" && rmdir "$d""#
            : #"d="$1/c$(printf '\377')"; mkdir "$d" && cd "$d""#
        // The shell removes what only it can name (TemporaryDirectory reads names as UTF-8).
        let result = try runCommand("/bin/sh", ["-c", enter + #" && "$2" defaults set --group "$3" k 1; code=$?; cd / && rmdir "$d" 2>/dev/null; exit $code"#, "sh",
                                                dir.path, tetherExecutable, name])
        #expect(result.status == 3)
        #expect(result.stderr.contains("cannot read the working directory for \(name)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/" + name))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/c\u{FFFD}"))
    }

    /// Output that cannot be written (a full disk) is an error, exit 3 and
    /// a sentence, not a success with nothing written; a watch ends at once.
    /// A reader that went (EPIPE) is not: `watchEndsQuietlyWhenItsReaderGoes`.
    @Test(arguments: [["defaults", "list", "--json"], ["defaults", "watch"], ["watch", "host"]])
    func anOutputThatCannotBeWrittenIsAnError(_ command: [String]) throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "k", "1"]).status == 0)
        let result = try runCommand("/bin/sh", ["-c", #"exec "$0" "$@" > /dev/full"#, tetherExecutable]
                                        + group.withGroup(command), environment: group.environment, timeout: 20)
        #expect(result.status == 3)
        #expect(result.stderr.contains("cannot write to standard output: No space left on device"), "\(result.stderr)")
    }

    /// An argument or TETHER_GROUP that is not UTF-8 is refused (exit 2,
    /// its bytes shown) and nothing changes: decoded, `x\xfe` and `x\xff`
    /// were one key, and `hold` ran its command on another file's name.
    @Test func anArgumentThatIsNotUTF8IsRefused() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "x", "1"]).status == 0)
        let script = #"""
            "$0" defaults set --group "$1" "x$(printf '\376')" 2; echo "set $?"
            TETHER_GROUP="$1/$(printf '\377')" "$0" defaults set k 3; echo "group $?"
            "$0" hold host --group "$1" -- /bin/sh -c 'echo ran' "x$(printf '\377')"; echo "hold $?"
            """#
        let result = try runCommand("/bin/sh", ["-c", script, tetherExecutable, group.path], environment: group.environment)
        #expect(result.stdout == "set 2\ngroup 2\nhold 2\n")
        #expect(result.stderr.contains(#"argument 5 is not UTF-8 text (x\xfe)"#), "\(result.stderr)")
        #expect(result.stderr.contains(#"TETHER_GROUP is not UTF-8 text ("#), "\(result.stderr)")
        #expect(try group.run(["defaults", "list"]).stdout == "x = 1\n")
        #expect(!FileManager.default.fileExists(atPath: group.path + "/\u{FFFD}"))
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

    /// The group removed and made again (a reset): a watch still hears its
    /// defaults. It went deaf: the store's directory went, and with it the
    /// only watch, and nothing waited for it to be made again.
    @Test func aWatchHearsTheDefaultsOfTheGroupMadeAgain() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "a", "1"]).status == 0)
        let watch = try group.start(["defaults", "watch", "--json"])
        defer { _ = try? watch.stop() }
        try watch.expectLine(#"{"watching":true}"#)
        // Renamed away first: whatever the watcher makes meanwhile is not
        // in the way of the removal.
        #expect(rename(group.path, group.path + ".gone") == 0)
        try FileManager.default.removeItem(atPath: group.path + ".gone")
        try FileManager.default.createDirectory(atPath: group.path, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        #expect(try group.run(["defaults", "set", "b", "2"]).status == 0)
        // The removal may be heard first ("a"), or with the new value.
        try watch.expectLineStarting(#"{"changed":["#, containing: #""b""#)
    }
}
