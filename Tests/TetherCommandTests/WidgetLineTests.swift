import Foundation
import Testing
import TetherIPC
@testable import tether

/// What `tether widget watch` writes for each bar, in-process.
@Suite struct WidgetLineTests {
    func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    let entry = WidgetEntry(text: "<span color='red'>x</span> & \"y\"\nz", tooltip: "a <i>b</i>", state: "critical",
                            fraction: 0.5)

    @Test func waybarGetsItsKeysWithTheTextShownAsWritten() throws {
        let line = WidgetLine(WidgetUpdate(name: "w", entry: entry, running: true)).rendered(.waybar)
        let waybar = try object(line)
        #expect(waybar["text"] as? String == "&lt;span color=&#39;red&#39;&gt;x&lt;/span&gt; &amp; &quot;y&quot; z")
        #expect(waybar["tooltip"] as? String == "a &lt;i&gt;b&lt;/i&gt;")
        #expect(waybar["class"] as? String == "critical")
        #expect(waybar["percentage"] as? Int == 50)
        #expect(!line.contains("\n"))
    }

    @Test func textIsOneLineAndOfflineSaysSo() {
        #expect(WidgetLine(WidgetUpdate(name: "w", entry: entry, running: true)).rendered(.text)
            == "<span color='red'>x</span> & \"y\" z")
        #expect(WidgetLine(WidgetUpdate(name: "w", entry: nil, running: true)).rendered(.text) == "w: nothing shown yet")
        #expect(WidgetLine(offline: "w", last: entry).rendered(.text) == "w: offline (the Tether host is not running)")
    }

    /// A terminal reads C1 controls too (U+009B is CSI, U+0085 a line
    /// break): a widget's text cannot restyle the terminal or split the line.
    @Test func textHasNoC1Controls() {
        let hostile = WidgetEntry(text: "a\u{9B}31mred\u{85}b\u{9D}0;title\u{9C}c")
        for format in WidgetLineFormat.allCases {
            let line = WidgetLine(WidgetUpdate(name: "w", entry: hostile, running: true)).rendered(format)
            #expect(!line.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(format): \(line)")
        }
        #expect(WidgetLine(WidgetUpdate(name: "w", entry: hostile, running: true)).rendered(.text) == "a 31mred b 0;title c")
    }

    /// polybar (`--format text`) reads `%{...}` in a script's line as its
    /// tags, and `%{A1:command:}` runs the command on a click: a widget's
    /// text (news from a server) can never open one.
    @Test func textOpensNoPolybarTag() {
        let hostile = WidgetEntry(text: "%{A1:xterm -e rm -rf ~:}click me%{A} 100%{F#f00}")
        let line = WidgetLine(WidgetUpdate(name: "w", entry: hostile, running: true)).rendered(.text)
        #expect(!line.contains("%{"), "\(line)")
        #expect(line.unicodeScalars.filter { $0 != "\u{200B}" }.map(String.init).joined()
            == "%{A1:xterm -e rm -rf ~:}click me%{A} 100%{F#f00}")
    }

    @Test func offlineKeepsTheLastTextWithTheOfflineClass() throws {
        let waybar = try object(WidgetLine(offline: "w", last: WidgetEntry(text: "12 °C")).rendered(.waybar))
        #expect(waybar["text"] as? String == "12 °C")
        #expect(waybar["class"] as? String == "offline")
        let json = try object(WidgetLine(offline: "w", last: nil).rendered(.json))
        #expect(json["online"] as? Bool == false)
        #expect(json["running"] as? Bool == false)
    }

    @Test func i3blocksMarksACriticalEntryUrgent() throws {
        let blocks = try object(WidgetLine(WidgetUpdate(name: "w", entry: entry, running: true)).rendered(.i3blocks))
        #expect(blocks["full_text"] as? String == "<span color='red'>x</span> & \"y\" z")
        #expect(blocks["urgent"] as? Bool == true)
    }

    /// A fraction the SDK let through unclamped cannot trap the bar's line.
    @Test(arguments: [Double.nan, .infinity, -.infinity, -3, 7, 1e300])
    func anyFractionGivesAPercentageFrom0To100OrNone(_ fraction: Double) throws {
        let line = WidgetLine(WidgetUpdate(name: "w", entry: WidgetEntry(text: "t", fraction: fraction), running: true))
        let percentage = try object(line.rendered(.waybar))["percentage"] as? Int
        if fraction.isFinite { #expect(percentage == (fraction < 0 ? 0 : 100)) } else { #expect(percentage == nil) }
    }
}
