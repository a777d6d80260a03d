import Foundation
import Testing
import TetherTestSupport

@Suite(.timed) struct ProbeCommandTests {
    @Test func notRunningIsExitOneWithTheContractJSON() throws {
        let group = try TestGroup()
        let text = try group.run(["probe", "feature", "rec"])
        #expect(text.status == 1)
        #expect(text.stdout == "not running\n")
        let json = try group.run(["probe", "host", "--json"])
        #expect(json.status == 1)
        let object = try group.json(json)
        #expect(object["target"] as? String == "host")
        #expect(object["name"] as? String == "host")
        #expect(object["running"] as? Bool == false)
        #expect(object["lock"] as? String == group.hostLock)
        #expect(object["pid"] == nil)
    }

    /// A group whose host is not running has no socket: its probe reads no
    /// `/proc/locks` (as long as the machine's locks: a thousand extensions
    /// made a CLI start twice as dear) to look for a host's claim.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
    func aProbeOfAStoppedHostReadsNoKernelLockTable() throws {
        let group = try TestGroup()
        #expect(try group.run(["probe", "host"]).status == 1)  // the group made
        let trace = group.dir.path + "/trace"
        let traced = try runCommand("/usr/bin/strace", ["-f", "-qq", "-e", "trace=open,openat", "-o", trace,
                                                        tetherExecutable, "probe", "host", "--group", group.path])
        #expect(traced.status == 1, "\(traced.stderr)")
        let opened = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(opened.contains("host.lock"), "\(opened)")
        #expect(!opened.contains("/proc/locks"), "\(opened)")
    }

    /// The CLI reads the environment for the group; the rest of the rule
    /// (XDG_STATE_HOME, then HOME) is `GroupPathTests`', in-process.
    @Test func groupComesFromTetherGroupWhenNoFlagIsGiven() throws {
        let group = try TestGroup()
        let result = try tether(["probe", "host", "--json"], environment: ["TETHER_GROUP": group.path])
        #expect(try group.json(result)["lock"] as? String == group.hostLock)
    }

    @Test(arguments: [
        ["probe", "feature", "../x"], ["probe", "feature", "Rec"], ["probe", "feature", ""],
        ["probe", "feature", "a/b"], ["probe", "feature", String(repeating: "a", count: 65)],
        ["probe", "feature"], ["probe", "host", "extra"], ["probe", "daemon"], ["probe"],
        ["hold", "feature", "../x", "--", "true"], ["hold", "feature", "ok"],
        ["watch", "feature", ".x"], ["watch", "host", "--timeout", "-1"], ["frobnicate"],
    ])
    func badUsageIsExitTwoWithOneClearLine(_ arguments: [String]) throws {
        let group = try TestGroup()
        let result = try group.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.isEmpty)
        #expect(!result.stderr.contains("Fatal error"))
        #expect(result.stdout.isEmpty)
        // Nothing was created for a name that was refused.
        #expect(!FileManager.default.fileExists(atPath: group.path + "/locks/features/..") ||
                !FileManager.default.fileExists(atPath: group.path + "/x.lock"))
    }

    /// Huge refused input: the one line repeats a bounded part of it. (Made
    /// here, not as arguments: Swift Testing would print them whole.)
    @Test func hugeRefusedInputIsRepeatedBounded() throws {
        let group = try TestGroup()
        for arguments in [["probe", "feature", String(repeating: "a", count: 100_000)],
                          ["probe", "host", String(repeating: "x\u{1}", count: 50_000)]] {
            let result = try group.run(arguments)
            #expect(result.status == 2 && result.stdout.isEmpty)
            #expect(!result.stderr.isEmpty && result.stderr.utf8.count < 1_000, "\(result.stderr.utf8.count) bytes")
        }
    }

    @Test func worldWritableGroupDirectoryIsRefusedAndLeftUntouched() throws {
        let group = try TestGroup()
        try FileManager.default.createDirectory(atPath: group.path, withIntermediateDirectories: false)
        chmod(group.path, 0o777)
        for arguments in [["probe", "host"], ["hold", "host", "--", "true"], ["watch", "host"]] {
            let result = try group.run(arguments)
            #expect(result.status == 3, "\(arguments)")
            #expect(result.stderr.contains("chmod 700"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: group.path).isEmpty)
    }

    @Test func symlinkedLockFileIsRefusedAndNothingIsWrittenThrough() throws {
        let group = try TestGroup()
        #expect(try group.run(["probe", "feature", "rec"]).status == 1)  // creates the layout
        let target = group.dir.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: group.featureLock("rec"), withDestinationPath: target)
        for arguments in [["probe", "feature", "rec"], ["hold", "feature", "rec", "--", "true"],
                          ["watch", "feature", "rec", "--timeout", "0"]] {
            let result = try group.run(arguments)
            #expect(result.status == 3, "\(arguments)")
            #expect(result.stderr.contains("symbolic link"))
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious")
    }

    @Test func everyCommandHasHelp() throws {
        for command in [[], ["probe"], ["hold"], ["watch"], ["bench"]] {
            let result = try tether(command + ["--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.contains("USAGE:"))
        }
    }
}
