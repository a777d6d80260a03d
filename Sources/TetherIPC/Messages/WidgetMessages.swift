import TetherJSON

/// What a widget shows now, as bars show it beside the text: a tooltip, a
/// state (a bar's CSS class) and a fraction (a bar's percentage).
/// `widget.entry`'s params, from a widget to its host; and the `entry` of
/// `widget.watch`'s answer and of `widget.changed`.
package struct WidgetEntry: Sendable, Equatable {
    package var text: String
    package var tooltip: String?
    /// A word a bar styles the line by ("warning", "critical"...).
    package var state: String?
    /// 0...1 (a bar's percentage); nil when it shows none.
    package var fraction: Double?

    package init(text: String, tooltip: String? = nil, state: String? = nil, fraction: Double? = nil) {
        self.text = text
        self.tooltip = tooltip
        self.state = state
        self.fraction = fraction
    }

    /// What one entry may hold: a status bar shows a line, not a document.
    package static let maximumTextBytes = 1_024, maximumTooltipBytes = 4_096, maximumStateBytes = 64

    private enum Field { static let text = "text", tooltip = "tooltip", state = "state", fraction = "fraction" }

    /// Read from a widget's `widget.entry`; refused with the field at fault.
    package init(params: JSONValue?) throws(RPCError) {
        guard let text = params?[Field.text]?.stringValue else { throw .invalidParams("\"\(Field.text)\" must be a string") }
        func optional(_ field: String) throws(RPCError) -> String? {
            guard let value = params?[field], value != .null else { return nil }
            guard let string = value.stringValue else { throw .invalidParams("\"\(field)\" must be a string") }
            return string
        }
        let fraction: Double?
        if let value = params?[Field.fraction], value != .null {
            guard let number = value.doubleValue, number.isFinite else {
                throw .invalidParams("\"\(Field.fraction)\" must be a number from 0 to 1")
            }
            fraction = min(max(number, 0), 1)
        } else {
            fraction = nil
        }
        self.init(text: text, tooltip: try optional(Field.tooltip), state: try optional(Field.state), fraction: fraction)
        if let refusal = refusal { throw refusal }
    }

    /// Why the host would refuse it; nil when it is fine.
    package var refusal: RPCError? {
        for (field, value, limit) in [(Field.text, text, Self.maximumTextBytes),
                                      (Field.tooltip, tooltip ?? "", Self.maximumTooltipBytes),
                                      (Field.state, state ?? "", Self.maximumStateBytes)]
        where value.utf8.count > limit {
            return .invalidParams("\"\(field)\" holds \(value.utf8.count) bytes; at most \(limit)")
        }
        if let state, !state.utf8.allSatisfy(Self.isStateByte) {
            return .invalidParams("\"\(Field.state)\" must be letters, digits, '-' or '_' (a bar's class)")
        }
        return nil
    }

    private static func isStateByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
            || byte == 0x2d || byte == 0x5f
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.text: .string(text)]
        if let tooltip { object[Field.tooltip] = .string(tooltip) }
        if let state { object[Field.state] = .string(state) }
        if let fraction { object[Field.fraction] = .number(JSONNumber(fraction)) }
        return .object(object)
    }

    /// Read leniently from the host's answer or event: no entry is nil.
    package init?(json: JSONValue?) {
        guard let json, let text = json[Field.text]?.stringValue else { return nil }
        let fraction = json[Field.fraction]?.doubleValue.flatMap { $0.isFinite ? min(max($0, 0), 1) : nil }
        self.init(text: text, tooltip: json[Field.tooltip]?.stringValue, state: json[Field.state]?.stringValue,
                  fraction: fraction)
    }
}

/// `widget.watch`'s answer and `widget.changed`'s params: a widget's entry
/// (none before it first shows one) and whether it runs. The entry stays
/// when the widget ends, as a home screen keeps a widget's last snapshot.
package struct WidgetUpdate: Sendable, Equatable {
    package var name: String
    package var entry: WidgetEntry?
    package var running: Bool

    package init(name: String, entry: WidgetEntry?, running: Bool) {
        self.name = name
        self.entry = entry
        self.running = running
    }

    private enum Field { static let name = "name", entry = "entry", running = "running" }

    package init?(json: JSONValue?) {
        guard let name = json?[Field.name]?.stringValue else { return nil }
        self.init(name: name, entry: WidgetEntry(json: json?[Field.entry]), running: json?[Field.running]?.boolValue ?? false)
    }

    package var json: JSONValue {
        [Field.name: .string(name), Field.entry: entry?.json ?? .null, Field.running: .bool(running)]
    }

}

/// `widget.watch`'s params: the widget; `untilAttached`: one by hand that is
/// not attached now (a watch going on across a host restart) is watched
/// until it attaches, not refused. Answered with its `WidgetUpdate`.
package struct WidgetWatchRequest: WireMessage, Equatable {
    package var name: String
    package var untilAttached: Bool

    package init(name: String, untilAttached: Bool = false) {
        self.name = name
        self.untilAttached = untilAttached
    }

    private enum Field { static let name = "name", untilAttached = "untilAttached" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue else { throw .invalidParams("\"\(Field.name)\" must be a string") }
        self.init(name: name, untilAttached: try wire.optional(Field.untilAttached, must: "true or false") { $0.boolValue } ?? false)
    }

    package var wire: JSONValue {
        untilAttached ? [Field.name: .string(name), Field.untilAttached: true] : [Field.name: .string(name)]
    }
}

/// `widget.reload`'s answer: the widgets asked to reload, and of them those
/// launched for it (an idle on-demand widget's first timeline is its reload).
package struct ReloadAnswer: WireMessage, Equatable {
    package var reloaded: [String]
    package var launched: [String]

    package init(reloaded: [String], launched: [String]) {
        self.reloaded = reloaded
        self.launched = launched
    }

    private enum Field { static let reloaded = "reloaded", launched = "launched" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let reloaded = wire?[Field.reloaded]?.arrayValue else { throw .invalidParams("not a reload's answer") }
        self.init(reloaded: reloaded.compactMap(\.stringValue),
                  launched: (wire?[Field.launched]?.arrayValue ?? []).compactMap(\.stringValue))
    }

    package var wire: JSONValue {
        [Field.reloaded: .array(reloaded.map(JSONValue.string)), Field.launched: .array(launched.map(JSONValue.string))]
    }
}
