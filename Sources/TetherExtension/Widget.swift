import TetherIPC

/// A widget extension: a timeline provider. Declare a type conforming to
/// `Widget` with `@main`, and the SDK runs it: it asks for a timeline at
/// start, shows each entry at its date, and reloads by the timeline's
/// policy, when the host asks, and when shared defaults change.
///
/// ```swift
/// @main struct Clock: Widget {
///     func timeline(for reason: ReloadReason, in context: ExtensionContext) -> Timeline {
///         Timeline(entries: [TimelineEntry(date: .now, content: "hello")], policy: .never)
///     }
/// }
/// ```
public protocol Widget {
    init()
    /// The manifest embedded at build time by the TetherManifest plugin
    /// (`.built`), or nil (the default).
    static var manifest: EmbeddedManifest? { get }
    func timeline(for reason: ReloadReason, in context: ExtensionContext) -> Timeline
    /// Whether a change to these defaults keys should reload the timeline
    /// (by default, any change does).
    func reloads(forChangedDefaults keys: [String]) -> Bool
}

extension Widget {
    public func reloads(forChangedDefaults keys: [String]) -> Bool { true }

    public static var manifest: EmbeddedManifest? { nil }

    public static func main() {
        ExtensionMain.run(role: .widget, manifest: Self.manifest) { context in WidgetDriver(widget: Self(), context: context) }
    }
}
