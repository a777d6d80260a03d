import Foundation
import Testing
import TetherLoop
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

    /// An SDK extension's plain log line stays one line, whatever it
    /// quotes: the example notification logs each push's title, and a title
    /// may hold a newline.
    @Test func anExtensionsLogLineQuotingAPushStaysOneLine() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHostWithExampleNotification()
        defer { host.stopAlways() }
        let push = try fixture.group.run(["push", #"{"title":"RED\nFORGED line"}"#])
        #expect(push.status == 0, "\(push.stderr)")
        // Split, the line would end at "RED" and the next begin "FORGED".
        let line = try host.expectLineStarting("[notify] rewriting").last ?? ""
        expectEscaped(line, containing: #"rewriting "RED\nFORGED line""#)
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

/// Something other than a host at the host's socket, answering what is
/// not JSON-RPC (its terminal escape included): `status` says so at once,
/// escaped, with exit 3 (the environment), not after its 5 s timeout.
@Suite(.timed) struct NotAHostAtTheSocketTests {
    @Test func aGarbledAnswerIsAnEnvironmentErrorAtOnce() throws {
        let group = try TestGroup()
        try FileManager.default.createDirectory(atPath: group.path, withIntermediateDirectories: true)
        let impostor = try TestProcess("python3", ["-c", """
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.bind("\(group.path)/host.sock")
            s.listen(4)
            print("listening", flush=True)
            c = s.accept()[0]
            c.recv(65536)
            c.sendall(b"hello \\x1b[2J world\\n")
            c.recv(65536)
            """])
        defer { impostor.stopAlways() }
        try impostor.expectLine("listening")
        let started = MonotonicClock.nanoseconds()
        let status = try group.run(["status"])
        #expect(status.status == 3, "\(status.stderr)")
        #expect(status.stderr.contains("host.sock cannot be taken: what came back is not JSON-RPC"), "\(status.stderr)")
        #expect((MonotonicClock.nanoseconds() - started) / 1_000_000 < 4_000)
    }
}

/// A string as a JSON string literal (quotes and escapes), for writing a file.
private enum JSONCodecEscape {
    static func string(_ text: String) -> Data {
        (try? JSONSerialization.data(withJSONObject: [text], options: [])).map { Data($0.dropFirst().dropLast()) } ?? Data()
    }
}
