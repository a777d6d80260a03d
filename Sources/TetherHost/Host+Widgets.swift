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
        if widgetEntries[peer.name] != entry {
            widgetEntries[peer.name] = entry
            tellWidgetWatchers(peer.name)
        }
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
            && widgetWatchers.values.filter { $0[ObjectIdentifier(connection)] != nil }.count < Self.maximumWidgetsWatched
        if managed == nil, attachedEntry(named: name)?.role != .widget, !waits {
            let widgets = supervisors.widgetNames
            return .failure(.refused("no widget named '\(name)'"
                + (widgets.isEmpty ? " (the host has none; a widget started by hand must be running)"
                                   : "; the host's widgets: " + widgets.joined(separator: ", "))))
        }
        widgetWatchers[name, default: [:]][ObjectIdentifier(connection)] = connection
        if widgetEntries[name] == nil { _ = launchIdleWidgets(named: name) }
        return .success(widgetUpdate(name))
    }

    func widgetUpdate(_ name: String) -> WidgetUpdate {
        WidgetUpdate(name: name, entry: widgetEntries[name], running: attachedEntry(named: name) != nil)
    }

    /// A widget attached or detached: its watchers hear whether it runs.
    /// What one started by hand showed is dropped when it goes unwatched:
    /// names by hand are anyone's to make up, so they must not pile up.
    func widgetAttachmentChanged(_ entry: AttachedExtension) {
        guard entry.role == .widget else { return }
        if !entry.managed, attachedEntry(named: entry.name) == nil, widgetWatchers[entry.name] == nil {
            widgetEntries[entry.name] = nil
        }
        tellWidgetWatchers(entry.name)
    }

    func tellWidgetWatchers(_ name: String) {
        guard let watchers = widgetWatchers[name], !watchers.isEmpty else { return }
        let update = widgetUpdate(name).json
        for connection in watchers.values { connection.notify(HostNotification.widgetChanged, update) }
    }

    func stopWatchingWidgets(_ connection: RPCConnection) {
        let key = ObjectIdentifier(connection)
        for name in Array(widgetWatchers.keys) where widgetWatchers[name]?.removeValue(forKey: key) != nil {
            guard widgetWatchers[name]?.isEmpty == true else { continue }
            widgetWatchers[name] = nil
            // The last watcher of one by hand that has gone: forgotten too.
            if supervisor(named: name) == nil, attachedEntry(named: name) == nil { widgetEntries[name] = nil }
        }
    }
}
