import Foundation
import Testing
import TetherTestSupport

/// What Tether prints of text it did not write (a key in the defaults
/// file, a path from the environment) is escaped: no terminal escape
/// reaches the terminal raw, and no newline in it forges a line of its own.
@Suite(.timed) struct EscapedOutputTests {
    static let forged = "x\u{1b}[31mRED\nFORGED line"

    func expectEscaped(_ text: String, containing part: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("\u{1b}"), "a raw escape: \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(!text.contains("\nFORGED"), "a forged line: \(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(text.contains(part), "\(text.debugDescription)", sourceLocation: sourceLocation)
    }

    /// The CLI refuses such a key, but the file may hold one.
    @Test func aKeyInTheDefaultsFileIsListedEscaped() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "k", "1"]).status == 0)
        let key = String(decoding: JSONCodecEscape.string(Self.forged), as: UTF8.self)
        try Data("{\(key):1}".utf8).write(to: URL(fileURLWithPath: group.path + "/stores/defaults.json"))
        let listed = try group.run(["defaults", "list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        expectEscaped(listed.stdout, containing: #"x\u{1b}[31mRED\nFORGED line = 1"#)
    }

    /// An SDK extension started by hand with a group it cannot use says
    /// why on one line, the path escaped.
    @Test func anExtensionsFailureQuotesAPathEscaped() throws {
        let widget = try runCommand(exampleExecutable("example-widget"), ["--group", "/proc/1/" + Self.forged])
        #expect(widget.status != 0)
        expectEscaped(widget.stderr, containing: #"RED\nFORGED line"#)
    }

    /// `status`'s first line names the group as given.
    @Test func statusNamesAGroupEscaped() throws {
        let dir = try TemporaryDirectory("tether-cli")
        let group = dir.path + "/" + Self.forged
        let environment = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/tether-tests",
                           "IBUS_ADDRESS": "unix:path=/nonexistent/tether-tests"]
        let host = try startTether(["host", "--group", group], environment: environment)
        defer { host.signal(SIGTERM); _ = try? host.waitForExit() }
        _ = try host.expectLineStarting("tether host ready: pid \(host.pid)")
        let status = try tether(["status", "--group", group], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        expectEscaped(status.stdout, containing: #"group \#(dir.path)/x\u{1b}[31mRED\nFORGED line"#)
    }
}

/// A string as a JSON string literal (quotes and escapes), for writing a file.
private enum JSONCodecEscape {
    static func string(_ text: String) -> Data {
        (try? JSONSerialization.data(withJSONObject: [text], options: [])).map { Data($0.dropFirst().dropLast()) } ?? Data()
    }
}
