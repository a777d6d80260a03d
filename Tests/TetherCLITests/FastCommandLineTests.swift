import Foundation
import Testing
import TetherTestSupport

/// `probe`, `hold` and `watch` skip ArgumentParser when their line is plain
/// (FastCommandLine). Every line here runs both ways (TETHER_ARGUMENT_PARSER=1
/// forces ArgumentParser) and must give the same status, output and errors.
@Suite(.timed) struct FastCommandLineTests {
    func bothWays(_ arguments: [String], group: TestGroup) throws -> (fast: CommandResult, parsed: CommandResult) {
        let fast = try tether(arguments)
        let parsed = try tether(arguments, environment: ["TETHER_ARGUMENT_PARSER": "1"])
        return (fast, parsed)
    }

    func expectSame(_ lines: [[String]], group: TestGroup) throws {
        for line in lines {
            let (fast, parsed) = try bothWays(line, group: group)
            #expect(fast.status == parsed.status, "\(line): \(fast.status) vs \(parsed.status) \(fast.stderr) | \(parsed.stderr)")
            #expect(fast.stdout == parsed.stdout, "\(line): \(fast.stdout) vs \(parsed.stdout)")
            #expect(fast.stderr == parsed.stderr, "\(line): \(fast.stderr) vs \(parsed.stderr)")
        }
    }

    @Test func plainAndUnusualLinesAnswerAlikeBothWays() throws {
        let group = try TestGroup()
        let g = group.path
        let holder = try group.startHold(["feature", "held"], ["sleep", "30"])
        defer { holder.signal(SIGTERM) }
        #expect(try group.run(["watch", "feature", "held", "--until", "running", "--timeout", "10"]).status == 0)
        try expectSame([
            ["probe", "host", "--group", g],
            ["probe", "feature", "held", "--group", g],
            ["probe", "feature", "held", "--group=\(g)", "--json"],
            ["probe", "--json", "--group", g, "feature", "idle"],
            ["probe", "feature", "Bad/Name", "--group", g],
            ["probe", "feature", "--group", g],
            ["probe", "host", "extra", "--group", g],
            ["probe", "gadget", "x", "--group", g],
            ["probe", "feature", "x", "--group", g, "--json", "--json"],
            ["probe", "feature", "x", "--group"],
            ["probe", "host", "--group="],
            ["probe", "--group=", g, "host"],
            ["hold", "host", "--group=", "--", "true"],
            ["watch", "host", "--group=\(g)", "--timeout=", "1"],
            ["probe", "feature", "x", "--group", g, "--unknown"],
            ["probe", "--help"],
            ["hold", "feature", "h1", "--group", g, "--", "/bin/sh", "-c", "exit 7"],
            ["hold", "feature", "held", "--group", g, "--", "true"],
            ["hold", "feature", "h2", "--group", g, "--wait", "0.1", "--", "true"],
            ["hold", "feature", "h2", "--group", g, "--wait", "-1", "--", "true"],
            ["hold", "feature", "h2", "--group", g],
            ["hold", "feature", "h2", "--group", g, "--"],
            ["watch", "feature", "idle", "--group", g, "--until", "not-running"],
            ["watch", "feature", "held", "--group", g, "--until", "running", "--json"],
            ["watch", "feature", "idle", "--group", g, "--until", "running", "--timeout", "0.2"],
            ["watch", "feature", "idle", "--group", g, "--until", "sometimes"],
            ["watch", "feature", "idle", "--group", g, "--timeout", "forever"],
        ], group: group)
    }
}

/// The binaries on the start-up path link neither Foundation's full library
/// nor its networking (libcurl and its dependency tree).
@Suite(.timed) struct StartupLinkageTests {
    @Test func tetherAndTheExamplesLinkNoFoundationNorCurl() throws {
        for binary in [tetherExecutable, exampleExecutable("example-widget"), exampleExecutable("example-keyboard"),
                       exampleExecutable("example-notification")] {
            let result = try runCommand("/usr/bin/ldd", [binary])
            let libraries = result.stdout.split(separator: "\n").compactMap {
                $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
            }
            #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed \(binary)'s libraries: \(libraries)")
            for forbidden in ["libFoundation.so", "libFoundationNetworking.so", "libcurl", "libFoundationInternationalization.so",
                              "lib_FoundationICU.so"] {
                #expect(!libraries.contains { $0.hasPrefix(forbidden) }, "\(binary) links \(forbidden): \(libraries)")
            }
        }
    }
}
