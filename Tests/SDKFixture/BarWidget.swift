import TetherExtension

/// Shows the defaults' `bar.text`, with `bar.tooltip`, `bar.state` and
/// `bar.fraction` beside it, reloading when they change: what a status bar
/// watching it gets is set by the test, entry by entry.
struct BarWidget: Widget {
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        let defaults = try context.defaults
        func text(_ key: String) -> String? { (try? defaults[key])??.stringValue }
        let entry = TimelineEntry(date: .now, content: text("bar.text") ?? "nothing yet", tooltip: text("bar.tooltip"),
                                  state: text("bar.state"), fraction: (try? defaults["bar.fraction"])??.doubleValue)
        return Timeline(entries: [entry], policy: .never)
    }
}
