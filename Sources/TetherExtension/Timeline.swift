import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherLoop

/// What a widget shows over time, and when to ask it again (WidgetKit's model).
public struct Timeline: Sendable, Equatable {
    /// What to show, each from its date.
    public var entries: [TimelineEntry]
    /// When to ask for the next timeline.
    public var policy: ReloadPolicy

    /// A timeline of these entries, reloaded by `policy`.
    public init(entries: [TimelineEntry], policy: ReloadPolicy) {
        self.entries = entries.sorted { $0.date < $1.date }
        self.policy = policy
    }
}

/// One state of the widget, shown from `date` until the next entry's date.
public struct TimelineEntry: Sendable, Equatable {
    /// When the entry begins to show.
    public var date: Date
    /// What it shows.
    public var content: String
    /// What a status bar shows on hover (`tether widget watch`).
    public var tooltip: String?
    /// A word a status bar styles the entry by, as its CSS class:
    /// letters, digits, `-` and `_` ("warning", "critical").
    public var state: String?
    /// How full a bar's gauge is, 0 to 1 (its percentage).
    public var fraction: Double?

    /// An entry showing `content` from `date`; what a status bar shows
    /// beside it (`tooltip`, `state`, `fraction`) is optional.
    public init(date: Date, content: String, tooltip: String? = nil, state: String? = nil, fraction: Double? = nil) {
        self.date = date
        self.content = content
        self.tooltip = tooltip
        self.state = state
        self.fraction = fraction
    }
}

/// When the widget's timeline is reloaded without being asked.
public enum ReloadPolicy: Sendable, Equatable, CustomStringConvertible {
    /// When the last entry's date passes.
    case atEnd
    /// At this date.
    case after(Date)
    /// Only when the host (or a defaults change) asks.
    case never

    public var description: String {
        switch self {
        case .atEnd: "at end"
        case .after(let date): "after \(WallClock.iso8601(seconds: date.timeIntervalSince1970) ?? "\(date.timeIntervalSince1970) s since 1970")"
        case .never: "never"
        }
    }
}

/// Why a timeline is being (re)loaded.
public enum ReloadReason: String, Sendable {
    /// The extension just started.
    case start
    /// The timeline's reload policy came due.
    case policy
    /// The host asked (`tether reload`).
    case host
    /// Shared defaults the widget shows have changed.
    case defaults
    /// The sign-in changed: logged in, logged out, or the session ended.
    case account
    /// The widget asked (`ExtensionContext.reloadTimeline()`), say because
    /// data it fetched arrived.
    case content
}
