import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherGroup
import TetherAuth
import TetherIPC
import TetherLoop

/// Shows a widget's timeline entry by entry and reloads it when due. Each
/// entry shown is one output line, `shows: CONTENT`; each reload is
/// `timeline (REASON): N entries, reload POLICY`. One `timeline` call runs
/// at a time: a reload asked for meanwhile runs after it (the latest
/// reason). A `timeline` that throws keeps the last timeline on screen and
/// is called again after 1 s, doubling to 60 s, until one succeeds or
/// another reload comes.
@ExtensionActor
final class WidgetDriver<W: Widget>: RoleDriver {
    /// A policy reload never comes sooner than this after the previous one,
    /// so a timeline whose end is already past cannot spin the loop.
    static var minimumReloadInterval: UInt64 { 100 }

    private let widget: W
    private let context: ExtensionContext
    private var timeline = Timeline(entries: [], policy: .never)
    private var shown = -1
    private var entryTimer: LoopTimer?
    private var reloadTimer: LoopTimer?
    private var lastReload: UInt64 = 0
    private var storeWatcher: StoreWatcher?
    private var credentialsWatcher: StoreWatcher?
    private var loading = false
    private var nextReason: ReloadReason?
    private var retryTimer: LoopTimer?
    /// A failed timeline is asked for again: 1 s, doubling to a minute.
    private var retry = Backoff(first: 1_000, maximum: 60_000)
    private var defaults: [String: JSONValue] = [:]
    private var authState: AuthState = .notAuthenticated
    /// The entry the host was last told (`widget.entry`), so a reload that
    /// shows the same tells nothing; nil after each attachment.
    private var told: WidgetEntry?
    /// A host too old for `widget.entry` is not told again.
    private var hostTakesEntries = true

    /// A widget the host launched hears of store changes from the host
    /// (`store.changed`), which watches them once for all its widgets: it
    /// opens no inotify instance of its own (the user has 128).
    func describe(_ hello: inout ExtensionHello) {
        if context.identity.isManaged { hello.events = [HostNotification.storeChanged] }
    }

    init(widget: W, context: ExtensionContext) {
        self.widget = widget
        self.context = context
    }

    func begin() {
        entryTimer = LoopTimer(loop: context.loop)
        reloadTimer = LoopTimer(loop: context.loop)
        retryTimer = LoopTimer(loop: context.loop)
        context.onReloadRequest = { [unowned self] in self.reload(.content) }
        defaults = (try? context.defaults.values()) ?? [:]
        authState = context.authState()
        // Launched: the host's answer to the hello says whether it relays.
        if !context.identity.isManaged { watchStores() }
        reload(.start)
    }

    /// Defaults and sign-in changes reach the widget straight from the
    /// files (inotify, one instance for the process), from any process that
    /// wrote them: for a widget started by hand, or under a host that does
    /// not relay them. A watch that cannot be set says what stops updating.
    private func watchStores() {
        let group = context.identity.group
        do {
            storeWatcher = try StoreWatcher(loop: context.loop, paths: [group.storePath("defaults")]) {
                [unowned self] _ in self.defaultsChanged()
            }
        } catch {
            context.log("warning: cannot watch the group's defaults; this widget will not reload when they change: \(error)")
        }
        // Beside the group (`GroupDirectory.secretsPath`).
        do {
            credentialsWatcher = try StoreWatcher(loop: context.loop, paths: [((try? group.preparedSecretsPath()) ?? group.secretsPath) + "/credentials.json"]) {
                [unowned self] _ in self.credentialsChanged()
            }
        } catch {
            context.log("warning: cannot watch the group's sign-in; this widget will not reload on a sign-in or sign-out: \(error)")
        }
    }

    private func defaultsChanged() {
        let new = (try? context.defaults.values()) ?? [:]
        let keys = SharedStore.changedKeys(from: defaults, to: new)
        defaults = new
        if !keys.isEmpty, widget.reloads(forChangedDefaults: keys) { reload(.defaults) }
    }

    private func credentialsChanged() {
        let new = context.authState()
        guard new != authState else { return }
        authState = new
        reload(.account)
    }

    func hostEvent(_ event: HostLink.Event) {
        if case .attached = event {
            // A host (a new one, after a restart) knows nothing yet.
            told = nil
            hostTakesEntries = true
            tellHost()
        }
        if case .attached(_, _, let events) = event, context.identity.isManaged, storeWatcher == nil {
            if events.contains(HostNotification.storeChanged) {
                // Whatever changed before the host started telling.
                defaultsChanged()
                credentialsChanged()
            } else {
                watchStores()
            }
        }
        guard case .message(let method, let params, let respond) = event else { return }
        switch method {
        case HostNotification.storeChanged:
            switch StoreChange(params: params) {
            case .defaults: defaultsChanged()
            case .credentials: credentialsChanged()
            case nil: break
            }
        case HostNotification.reload:
            reload(.host)
        case HostNotification.defaultsChanged:
            // Changes to the defaults file arrive through the watcher; this
            // relay carries keys an extension announced for data it keeps elsewhere.
            if widget.reloads(forChangedDefaults: DefaultsChange(params: params).keys) { reload(.defaults) }
        default:
            respond(.failure(.methodNotFound(method)))
        }
    }

    private func reload(_ reason: ReloadReason) {
        guard !loading else {
            nextReason = reason
            return
        }
        loading = true
        retryTimer?.stop()
        ExtensionActor.task { [self] in
            let outcome: Result<Timeline, any Error>
            do { outcome = .success(try await widget.timeline(for: reason, in: context)) } catch { outcome = .failure(error) }
            // The policy's floor counts from the answer, however long it took.
            lastReload = context.loop.now
            switch outcome {
            case .success(let timeline):
                retry.reset()
                self.timeline = timeline
                shown = -1
                context.log("timeline (\(reason.rawValue)): \(timeline.entries.count) entries, reload \(timeline.policy)")
                showDueEntry()
                schedulePolicyReload()
            case .failure(let error):
                let delay = retry.next()
                context.log("timeline (\(reason.rawValue)) failed: \(error); keeping the last one, trying again in \(delay / 1000) s")
                retryTimer?.start(afterMilliseconds: delay) { [unowned self] in self.reload(reason) }
            }
            loading = false
            if let next = nextReason {
                nextReason = nil
                reload(next)
            }
        }
    }

    /// Shows the latest entry whose date has come, and arms a timer for the next.
    private func showDueEntry() {
        let now = Date()
        let due = timeline.entries.lastIndex { $0.date <= now } ?? -1
        if due > shown {
            shown = due
            context.log("shows: \(timeline.entries[due].content)")
            tellHost()
        }
        if let next = timeline.entries.indices.first(where: { $0 > shown }) {
            entryTimer?.start(afterMilliseconds: Self.milliseconds(until: timeline.entries[next].date)) { [unowned self] in
                self.showDueEntry()
            }
        }
    }

    /// Tells the host what is shown now, for the status bars that watch
    /// it (`tether widget watch`); only when it differs from what it was
    /// last told. An entry the host refuses (too long) is logged.
    private func tellHost() {
        guard hostTakesEntries, context.isHostAttached, timeline.entries.indices.contains(shown) else { return }
        let shownEntry = timeline.entries[shown]
        let entry = WidgetEntry(text: shownEntry.content, tooltip: shownEntry.tooltip, state: shownEntry.state,
                                fraction: shownEntry.fraction)
        guard entry != told else { return }
        told = entry
        context.send(HostMethod.widgetEntry, entry.json) { [weak self] result in
            guard let self, case .failure(let error) = result else { return }
            if case .refused(let reason) = error, reason.hasPrefix("Method not found") {
                self.hostTakesEntries = false  // a host from before status bars
            } else if case .refused(let reason) = error {
                self.context.log("the host did not take the entry shown: \(reason)", level: .warning)
            }
        }
    }

    private func schedulePolicyReload() {
        reloadTimer?.stop()
        let date: Date?
        switch timeline.policy {
        case .atEnd: date = timeline.entries.last?.date ?? Date()
        case .after(let when): date = when
        case .never: date = nil
        }
        guard let date else { return }
        let sinceLast = context.loop.now - lastReload
        let floor = sinceLast >= Self.minimumReloadInterval ? 0 : Self.minimumReloadInterval - sinceLast
        reloadTimer?.start(afterMilliseconds: max(floor, Self.milliseconds(until: date))) { [unowned self] in
            self.reload(.policy)
        }
    }

    nonisolated static func milliseconds(until date: Date) -> UInt64 {
        // At most a year ahead: a date far in the future (or a NaN) must not trap.
        let interval = date.timeIntervalSinceNow
        guard interval > 0 else { return 0 }
        return UInt64((min(interval, 365 * 86_400) * 1000).rounded(.up))
    }
}
