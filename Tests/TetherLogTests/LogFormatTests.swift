import Logging
import Testing
@testable import TetherJSON
@testable import TetherLog

/// Both log forms keep what others sent from forging a line or acting on a
/// terminal; the JSON form reads back exactly what was sent.
@Suite struct LogFormatTests {
    static let forged = "ok\n[host] forged \u{1B}[2J\u{9B}2K\u{202E}\u{2028}"

    @Test func theTextFormEscapesExtensionLinesAndHostSentences() {
        let output = LogFormat.text.render(level: .info, message: Self.forged,
                                           metadata: ["extension": "x", "origin": "output", "note": "\(Self.forged)"])
        let sentence = LogFormat.text.render(level: .warning, message: "manifest: '\(Self.forged)' is not a role", metadata: [:])
        for line in [output, sentence] {
            #expect(!line.unicodeScalars.contains { $0 == "\n" || PrintableText.needsEscape($0) }, "\(line)")
        }
        #expect(output == #"[x] ok\n[host] forged \u{1b}[2J\u{9b}2K\u{202e}\u{2028} note=ok\n[host] forged \u{1b}[2J\u{9b}2K\u{202e}\u{2028}"#)
    }

    @Test func theJSONFormEscapesAsJSONAndReadsBackExactly() throws {
        let line = LogFormat.json.render(level: .info, message: Self.forged, metadata: [:])
        #expect(!line.unicodeScalars.contains { $0 == "\n" || PrintableText.needsEscape($0) }, "\(line)")
        #expect(line.contains(#"ok\n[host] forged \u001b[2J\u009b2K\u202e\u2028"#), "\(line)")
        #expect(try JSONCodec.parse(Array(line.utf8))["message"]?.stringValue == Self.forged)
    }
}
