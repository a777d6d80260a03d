import TetherIPC
import TetherManifest

/// What each widget shows, for whoever puts it before a person (a status
/// bar through `tether widget watch`): a widget tells its entry
/// (`widget.entry`), and the connections watching it hear each change
/// (`widget.changed`), and only they. The last entry stays when the widget
/// ends, as a home screen keeps a widget's last snapshot.
extension Host {
    /// Widgets one connection may watch before they attach (`untilAttached`).
    static let maximumWidgetsWatched = 16

    /// `widget.entry` from an attached widget: kept, and told to its
    /// watchers if it changed.
    func widgetEntry(from connection: RPCConnection, _ entry: WidgetEntry) -> Result<JSONValue, RPCError> {
        guard let peer = attached[ObjectIdentifier(connection)], peer.role == .widget else {
            return .failure(.refused("only an attached widget tells its entry"))
        }
        tell(widgets.show(entry, for: peer.name), peer.name)
        return .success([:])
    }

    /// `widget.watch`: the widget's entry now, and its changes from now
    /// on. An on-demand widget with nothing to show yet is launched.
    func watchWidget(_ connection: RPCConnection, _ request: WidgetWatchRequest) -> Result<WidgetUpdate, RPCError> {
        let name = request.name
        let managed = supervisor(named: name)
        if let managed, managed.manifest.role != .widget {
            return .failure(.refused("'\(name)' is a \(managed.manifest.role.rawValue), not a widget"))
        }
        // A widget by hand not attached yet, watched by a watch that saw it
        // before this host: its watchers hear when it attaches (a few names each).
        let waits = managed == nil && attachedEntry(named: name) == nil && request.untilAttached
            && widgets.watchedCount(by: connection) < Self.maximumWidgetsWatched
        if managed == nil, attachedEntry(named: name)?.role != .widget, !waits {
            let names = supervisors.widgetNames
            return .failure(.refused("no widget named '\(name)'"
                + (names.isEmpty ? " (the host has none; a widget started by hand must be running)"
                                   : "; the host's widgets: " + names.joined(separator: ", "))))
        }
        widgets.watch(name, by: connection)
        if widgets.entry(name) == nil { _ = launchIdleWidgets(named: name) }
        return .success(widgetUpdate(name))
    }

    func widgetUpdate(_ name: String) -> WidgetUpdate {
        WidgetUpdate(name: name, entry: widgets.entry(name), running: attachedEntry(named: name) != nil)
    }

    /// A widget attached or detached: its watchers hear whether it runs.
    /// What one started by hand showed is dropped when it goes unwatched:
    /// names by hand are anyone's to make up, so they must not pile up.
    func widgetAttachmentChanged(_ entry: AttachedExtension) {
        guard entry.role == .widget else { return }
        if !entry.managed, attachedEntry(named: entry.name) == nil, !widgets.isWatched(entry.name) {
            widgets.forget(entry.name)
        }
        tell(widgets.watchers(of: entry.name), entry.name)
    }

    /// `watchers` hear what `name` shows now.
    private func tell(_ watchers: [RPCConnection], _ name: String) {
        guard !watchers.isEmpty else { return }
        let update = widgetUpdate(name).json
        for connection in watchers { connection.notify(HostNotification.widgetChanged, update) }
    }

    func stopWatchingWidgets(_ connection: RPCConnection) {
        for name in widgets.unwatchAll(by: connection) {
            // The last watcher of one by hand that has gone: forgotten too.
            if supervisor(named: name) == nil, attachedEntry(named: name) == nil { widgets.forget(name) }
        }
    }
}
