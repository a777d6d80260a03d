import Foundation
import Testing
import TetherLoop
import TetherTestSupport

/// The shipped CLI has no hidden command or option: everything it accepts,
/// its help shows (tests and benchmarks bring their own executables).
@Suite(.timed) struct HelpTests {
    @Test func noCommandOrOptionIsHidden() throws {
        let dump = try tether(["--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let root = try #require((try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])?["command"]
            as? [String: Any])
        var hidden: [String] = []
        var commands = 0
        func walk(_ command: [String: Any], _ path: String) {
            commands += 1
            if command["shouldDisplay"] as? Bool == false { hidden.append(path) }
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool == false {
                hidden.append("\(path) \((argument["names"] as? [[String: Any]])?.first?["name"] as? String ?? "?")")
            }
            // ArgumentParser's own `help` (its `-h` is hidden there by design).
            for sub in command["subcommands"] as? [[String: Any]] ?? [] where sub["commandName"] as? String != "help" {
                walk(sub, path + " " + (sub["commandName"] as? String ?? "?"))
            }
        }
        walk(root, "tether")
        #expect(commands > 20)
        #expect(hidden.isEmpty, "hidden: \(hidden)")
    }

    /// A usage error quotes the argument: its terminal escapes are shown,
    /// not sent to the terminal (clearing it, or setting its title).
    @Test func aUsageErrorShowsAnArgumentsEscapesWithoutSendingThem() throws {
        let result = try tether(["status", "--timeout", "\u{1B}[2J\u{07}"])
        #expect(result.status == 2)
        #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" }, "\(result.stderr)")
        #expect(result.stderr.contains("\\u{1b}[2J\\u{7}"), "\(result.stderr)")
        #expect(result.stderr.contains("\nUsage: "), "its lines are kept")
    }

    /// One version, said alike by `--version`, doctor (text and JSON) and
    /// the host's start record (`ObservabilityTests`).
    @Test func everyCommandSaysTheSameVersion() throws {
        #expect(TetherVersion.current.split(separator: ".").count == 3
                && TetherVersion.current.split(separator: ".").allSatisfy { Int($0) != nil })
        let version = try tether(["--version"])
        #expect(version.status == 0 && version.stdout == TetherVersion.current + "\n", "\(version.stdout) \(version.stderr)")
        let group = try TestGroup()
        let text = try group.run(["doctor"])
        #expect(text.stdout.split(separator: "\n").first == "tether \(TetherVersion.current)"[...], "\(text.stdout)")
        let json = try group.json(try group.run(["doctor", "--json"]))
        #expect(json["version"] as? String == TetherVersion.current)
    }
}
