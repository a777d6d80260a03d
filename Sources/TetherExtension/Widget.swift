import TetherIPC

/// A widget extension: a timeline provider. Declare a type conforming to
/// `Widget` with `@main`, and the SDK runs it: it asks for a timeline at
/// start, shows each entry at its date, and reloads by the timeline's
/// policy, when the host asks, and when shared defaults change.
///
/// `timeline` may await what it shows (a fetch, a file); reloads asked for
/// meanwhile run once it returns. One that throws keeps the last timeline
/// on screen and is asked again, 1 s later, then doubling up to a minute.
///
/// ```swift
/// @main struct Clock: Widget {
///     func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
///         Timeline(entries: [TimelineEntry(date: .now, content: "hello")], policy: .never)
///     }
/// }
/// ```
@ExtensionActor
public protocol Widget {
    /// Made once, before the first timeline.
    init()
    /// The timeline to show now, and when to ask again; a thrown error is
    /// logged and the previous timeline stays.
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline
    /// Whether a change to these defaults keys should reload the timeline
    /// (by default, any change does).
    func reloads(forChangedDefaults keys: [String]) -> Bool
}

extension Widget {
    public func reloads(forChangedDefaults keys: [String]) -> Bool { true }

    /// Runs the widget: attaches to a host, confines itself when started
    /// by hand, and answers reloads until it ends. `@main` calls it.
    public nonisolated static func main() {
        ExtensionMain.run(role: .widget, manifest: { EmbeddedManifest.embedded }) { context in WidgetDriver(widget: Self(), context: context) }
    }
}
