import Testing
import TetherGroup
@testable import tether

/// `probe`, `hold` and `watch` skip ArgumentParser when their line is plain
/// (FastCommandLine). Whatever line the fast reader takes, ArgumentParser
/// must read as the same command; everything else goes to ArgumentParser.
@Suite struct FastCommandLineTests {
    /// The command ArgumentParser reads from `line`, or nil where it refuses it.
    func parsed(_ line: [String]) -> LivenessLine? {
        guard let command = try? Tether.parseAsRoot(line) else { return nil }
        switch command {
        case let probe as Probe: return try? probe.line()
        case let hold as Hold: return try? hold.line()
        case let watch as Watch: return try? watch.line()
        default: return nil
        }
    }

    func expectAlike(_ line: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        if let fast = FastCommandLine.parse(line) {
            #expect(parsed(line) == fast, "\(line)", sourceLocation: sourceLocation)
        }
    }

    @Test func plainLinesTakeTheFastPathAndMeanTheSameToArgumentParser() throws {
        let g = "/run/g"
        let held = LockTarget.feature(try FeatureName("held"))
        let plain: [([String], LivenessLine)] = [
            (["probe", "host", "--group", g], .probe(target: .host, group: g, json: false)),
            (["probe", "feature", "held", "--group=\(g)", "--json"], .probe(target: held, group: g, json: true)),
            (["probe", "--json", "--group", g, "feature", "held"], .probe(target: held, group: g, json: true)),
            (["probe", "host"], .probe(target: .host, group: nil, json: false)),
            (["hold", "feature", "held", "--group", g, "--wait", "0.1", "--", "sh", "-c", "exit 7"],
             .hold(target: held, group: g, wait: Seconds(argument: "0.1"), command: ["sh", "-c", "exit 7"])),
            (["hold", "host", "--", "true", "--group", "x"],
             .hold(target: .host, group: nil, wait: nil, command: ["true", "--group", "x"])),
            (["watch", "feature", "held", "--group", g, "--until", "not-running", "--timeout=2.5", "--json"],
             .watch(target: held, group: g, until: .notRunning, timeout: Seconds(argument: "2.5"), json: true)),
            (["watch", "host"], .watch(target: .host, group: nil, until: nil, timeout: nil, json: false)),
        ]
        for (line, meaning) in plain {
            #expect(FastCommandLine.parse(line) == meaning, "\(line)")
            #expect(parsed(line) == meaning, "\(line)")
        }
    }

    /// Lines with a meaning of their own to ArgumentParser (help, errors, an
    /// empty `--group=`, a repeated flag) are left to it.
    @Test func unusualLinesAreLeftToArgumentParser() {
        let g = "/run/g"
        let unusual: [[String]] = [
            ["probe", "feature", "Bad/Name", "--group", g], ["probe", "feature", "--group", g],
            ["probe", "host", "extra", "--group", g], ["probe", "gadget", "x", "--group", g],
            ["probe", "feature", "x", "--group", g, "--json", "--json"], ["probe", "feature", "x", "--group"],
            ["probe", "host", "--group="], ["probe", "--group=", g, "host"], ["hold", "host", "--group=", "--", "true"],
            ["watch", "host", "--group=\(g)", "--timeout=", "1"], ["probe", "feature", "x", "--group", g, "--unknown"],
            ["probe", "--help"], ["hold", "feature", "h2", "--group", g, "--wait", "-1", "--", "true"],
            ["hold", "feature", "h2", "--group", g], ["hold", "feature", "h2", "--group", g, "--"],
            ["watch", "feature", "idle", "--group", g, "--until", "sometimes"],
            ["watch", "feature", "idle", "--group", g, "--timeout", "forever"], ["status"], [],
        ]
        for line in unusual {
            #expect(FastCommandLine.parse(line) == nil, "\(line)")
        }
    }

    /// Thousands of lines drawn from the grammar's pieces and its traps:
    /// every one the fast reader takes reads the same through ArgumentParser.
    @Test func randomLinesTakenFastReadTheSameThroughArgumentParser() {
        let pieces: [[String]] = [
            ["host"], ["host"], ["feature", "held"], ["feature", "held"], ["feature", "Bad/Name"], ["feature"], ["x"],
            ["--group", "/g"], ["--group=/g"], ["--group="], ["--group"], ["--json"], ["--json"], ["--wait", "0.1"],
            ["--wait", "-1"], ["--wait=2"], ["--until", "running"], ["--until=not-running"], ["--until", "sometimes"],
            ["--timeout", "1"], ["--timeout=forever"], ["--timeout", "-"], ["--unknown"], ["-h"], ["--", "true"],
            ["--", "true"], ["--"], ["--", "sh", "--json"],
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: (state >> 33) % UInt64(bound))
        }
        var taken = 0
        for _ in 0..<6_000 {
            var line = [["probe", "hold", "watch"][next(3)]]
            for _ in 0..<(1 + next(4)) { line += pieces[next(pieces.count)] }
            if FastCommandLine.parse(line) != nil { taken += 1 }
            expectAlike(line)
        }
        // The draw reaches the fast path often enough to mean something.
        #expect(taken > 150, "only \(taken) of 6,000 lines were plain")
    }
}
