import ArgumentParser
import TetherIPC
import TetherJSON

/// How `tether widget watch` writes each line, for the status bar reading it.
enum WidgetLineFormat: String, ExpressibleByArgument, CaseIterable {
    /// The entry's text, one plain line.
    case text
    /// Everything known: {name, text, tooltip, state, fraction, running, online}.
    case json
    /// waybar's `custom` module with `"return-type": "json"`: {text, tooltip,
    /// class, percentage, alt}; waybar reads text and tooltip as Pango
    /// markup, so they are escaped (`MarkupText`): shown as written.
    case waybar
    /// i3blocks with `format=json`: {full_text, short_text, urgent}.
    case i3blocks
}

/// One line about a widget: what it shows, or that the host is gone.
struct WidgetLine: Equatable {
    let name: String
    let entry: WidgetEntry?
    let running: Bool
    /// The host answers (false: the line says offline).
    let online: Bool

    init(_ update: WidgetUpdate) {
        name = update.name
        entry = update.entry
        running = update.running
        online = true
    }

    /// The host is not running: the last entry known, marked offline.
    init(offline name: String, last: WidgetEntry?) {
        self.name = name
        entry = last
        running = false
        online = false
    }

    /// The class a bar styles it by: the entry's state, "offline" without
    /// a host, "empty" before the widget first shows something.
    var state: String? {
        guard online else { return "offline" }
        guard let entry else { return "empty" }
        return entry.state
    }

    var tooltip: String? {
        guard online else { return "\(name): the Tether host is not running" }
        return entry?.tooltip
    }

    func rendered(_ format: WidgetLineFormat) -> String {
        let text = entry?.text ?? ""
        switch format {
        case .text:
            if !online { return "\(name): offline (the Tether host is not running)" }
            guard let entry else { return "\(name): nothing shown yet" }
            // polybar reads "%{" as a tag (%{A1:cmd:} runs cmd on a click):
            // a zero-width space keeps the text what it says and nothing else.
            return Self.oneLine(entry.text).replacing("%{", with: "%\u{200B}{")
        case .json:
            var object: [String: JSONValue] = ["name": .string(name), "text": .string(text), "running": .bool(running),
                                               "online": .bool(online)]
            if let tooltip { object["tooltip"] = .string(tooltip) }
            if let state { object["state"] = .string(state) }
            if let fraction = entry?.fraction { object["fraction"] = .number(JSONNumber(fraction)) }
            return JSONValue.object(object).description
        case .waybar:
            var object: [String: JSONValue] = ["text": .string(MarkupText.escaped(Self.oneLine(text)))]
            if let tooltip { object["tooltip"] = .string(MarkupText.escaped(tooltip)) }
            if let state {
                object["class"] = .string(state)
                object["alt"] = .string(state)
            }
            // Clamped before the conversion: a NaN or an infinity cannot trap.
            if let fraction = entry?.fraction, fraction.isFinite {
                object["percentage"] = .integer(Int64((min(max(fraction, 0), 1) * 100).rounded()))
            }
            return JSONValue.object(object).description
        case .i3blocks:
            let shown = online ? Self.oneLine(text) : "\(name): offline"
            var object: [String: JSONValue] = ["full_text": .string(shown), "short_text": .string(shown)]
            if state == "critical" || state == "urgent" { object["urgent"] = .bool(true) }
            return JSONValue.object(object).description
        }
    }

    /// A bar reads a line per update: line breaks and other controls (C0,
    /// DEL and C1, which terminals read too) become spaces.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? " " : $0 }))
    }
}
