import Foundation
import Testing
import TetherTestSupport

/// What an extension prints and what a manifest says reach the host's log
/// and `status` as data: no line break, escape sequence, C1 control, bidi
/// override or line separator gets through raw, so nothing can forge a host
/// line or repaint the terminal, and the JSON log stays valid and lossless.
@Suite(.timed) struct ForgedLineTests {
    /// What the extension prints: a carriage return that would overwrite the
    /// line, an ESC clear-screen, CSI as a C1 control, a right-to-left
    /// override and a line separator.
    static let hostile = "fine\r[host] fake\u{1B}[2J\u{9B}2Kx\u{202E}txt.exe\u{2028}[host] second"
    static let unprintable: [Unicode.Scalar] = ["\r", "\u{1B}", "\u{9B}", "\u{202E}", "\u{2028}"]

    /// A manifest whose `role` holds a newline and escapes (JSON-escaped in
    /// the file), and an extension that prints `hostile` on stdout and stderr.
    func fixture() throws -> HostFixture {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/bad.extension.json",
                      #"{"name":"bad","role":"x\n[host] forged\u001b[2J\u009b\u202e","executable":"loud.sh"}"#)
        try fixture.addExtension("loud", script: """
            printf '%s\\n' '\(Self.hostile)'
            printf '%s\\n' '\(Self.hostile)' >&2
            echo done
            exec sleep 300
            """)
        return fixture
    }

    func expectPrintable(_ text: String, _ what: String) {
        let raw = text.unicodeScalars.filter { Self.unprintable.contains($0) }
        #expect(raw.isEmpty, "\(what) holds \(raw.map { String($0.value, radix: 16) })")
    }

    @Test func theTextLogAndStatusShowEscapes() throws {
        let fixture = try fixture()
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions, "--grace", "2"]))
        let lines = try host.expectLine("[loud] done", timeout: 30)
        let status = try fixture.group.run(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try host.stop() == 0)
        let stdout = lines.joined(separator: "\n") + "\n" + (try host.remainingOutput())
        let stderr = try host.standardError()
        for (what, text) in [("stdout", stdout), ("stderr", stderr), ("status", status.stdout)] {
            expectPrintable(text, what)
            let starts = text.split(separator: "\n").filter { $0.hasPrefix("[host]") }
            #expect(starts.isEmpty, "\(what) has a forged line: \(starts)")
        }
        #expect(stdout.contains(#"[loud] fine\r[host] fake\u{1b}[2J\u{9b}2Kx\u{202e}txt.exe\u{2028}[host] second"#), "\(stdout)")
        #expect(stderr.contains(#"[loud] fine\r[host] fake"#), "\(stderr)")
        // The manifest's role is quoted as escapes in the host's refusal.
        #expect((stdout + stderr).contains(#"'x\n[host] forged\u{1b}[2J\u{9b}\u{202e}' is not a role"#), "\(stdout + stderr)")
    }

    @Test func theJSONLogIsValidAndKeepsEveryCharacter() throws {
        let fixture = try fixture()
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions,
                                                             "--grace", "2", "--log-format", "json"]))
        var lines: [String] = []
        for _ in 0..<40 {
            let line = try #require(try host.readLine(timeout: 30), "the host's stdout ended")
            lines.append(line)
            if line.contains(#""message":"done""#) { break }
        }
        #expect(try host.stop() == 0)
        lines += try host.remainingOutput().split(separator: "\n").map(String.init)
        lines += try host.standardError().split(separator: "\n").map(String.init)
        var messages: [String] = []
        for line in lines {
            expectPrintable(line, "a JSON line")
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            if let message = record["message"] as? String { messages.append(message) }
        }
        // Read back, the message is exactly what was printed, twice (stdout, stderr).
        #expect(messages.filter { $0 == Self.hostile }.count == 2, "\(messages)")
        #expect(messages.contains { $0.contains("'x\n[host] forged\u{1B}[2J\u{9B}\u{202E}' is not a role") }, "\(messages)")
    }
}
