import Foundation
import Testing
import TetherTestSupport

/// The man pages in docs/man (written by scripts/man-pages.sh from the
/// command definitions) are in step with the CLI: a page for each command
/// and none for a command that is gone, each with the command's abstract
/// and every option it takes.
@Suite struct ManPageTests {
    static let directory = Repository.path("docs/man")

    @Test func everyCommandHasAPageInStepWithIt() throws {
        let dump = try tether(["--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let root = try #require((try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])?["command"]
            as? [String: Any])
        var expected: Set<String> = []
        var stale: [String] = []
        func walk(_ command: [String: Any], _ path: [String]) throws {
            let page = path.joined(separator: "-") + ".1"
            expected.insert(page)
            guard let text = try? String(contentsOfFile: Self.directory + "/" + page, encoding: .utf8) else {
                stale.append("\(page): missing")
                return
            }
            if let abstract = command["abstract"] as? String, !abstract.isEmpty,
               !text.contains(".Nd \"\(abstract.replacingOccurrences(of: "\\", with: "\\\\"))\"") {
                stale.append("\(page): abstract")
            }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                for name in argument["names"] as? [[String: Any]] ?? [] {
                    guard let spelled = name["name"] as? String, let kind = name["kind"] as? String else { continue }
                    let mark = kind == "short" ? "Fl \(spelled)" : "Fl -\(spelled)"
                    if !text.contains(mark) { stale.append("\(page): \(mark)") }
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] where sub["commandName"] as? String != "help" {
                try walk(sub, path + [sub["commandName"] as? String ?? "?"])
            }
        }
        try walk(root, ["tether"])
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: Self.directory))
        stale += present.subtracting(expected).sorted().map { "\($0): no such command" }
        #expect(expected.count > 30)
        #expect(stale.isEmpty, "run scripts/man-pages.sh: \(stale)")
    }
}
