import Foundation
import Testing
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
}
