import Testing
@testable import TetherJSON

/// What an untrusted string may hold that a terminal or a text log would
/// act on, each shown as an escape; everything else untouched.
@Suite struct PrintableTextTests {
    @Test(arguments: [
        ("a\nb", #"a\nb"#), ("a\rb", #"a\rb"#), ("\u{1B}[2J", #"\u{1b}[2J"#), ("\u{0}", #"\u{0}"#),
        ("\u{7F}", #"\u{7f}"#), ("\u{85}", #"\u{85}"#), ("\u{9B}31m", #"\u{9b}31m"#),
        ("\u{202E}gnp.exe", #"\u{202e}gnp.exe"#), ("\u{2066}x\u{2069}", #"\u{2066}x\u{2069}"#),
        ("\u{200E}\u{200F}\u{061C}", #"\u{200e}\u{200f}\u{61c}"#), ("a\u{2028}b\u{2029}", #"a\u{2028}b\u{2029}"#),
    ])
    func controlsAreEscaped(_ text: String, _ shown: String) {
        #expect(PrintableText.escaped(text) == shown)
    }

    @Test func printableTextIsUntouched() {
        for text in ["plain", "tab\there", "café ☕️ 日本語", "\u{A0}no-break", "emoji 👩‍👩‍👧 joined"] {
            #expect(PrintableText.escaped(text) == text)
        }
    }
}
