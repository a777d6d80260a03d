import TetherIPC

/// What each widget shows and who watches it: the entry each widget told
/// last (kept when it ends, as a home screen keeps a widget's last
/// snapshot) and the watchers of each name, who alone hear its changes.
/// Generic over who watches, so it is tested with plain objects; the host
/// turns what it returns into notifications.
struct WidgetBoard<Watcher: AnyObject> {
    private var entries: [String: WidgetEntry] = [:]
    private var watchers: [String: [ObjectIdentifier: Watcher]] = [:]

    func entry(_ name: String) -> WidgetEntry? { entries[name] }

    /// Keeps what `name` shows now; who to tell (none if nothing changed).
    mutating func show(_ entry: WidgetEntry, for name: String) -> [Watcher] {
        guard entries[name] != entry else { return [] }
        entries[name] = entry
        return watchers(of: name)
    }

    /// Forgets what `name` showed.
    mutating func forget(_ name: String) { entries[name] = nil }

    func watchers(of name: String) -> [Watcher] { watchers[name].map { Array($0.values) } ?? [] }

    func isWatched(_ name: String) -> Bool { watchers[name] != nil }

    /// How many names `watcher` watches.
    func watchedCount(by watcher: Watcher) -> Int {
        let key = ObjectIdentifier(watcher)
        return watchers.values.filter { $0[key] != nil }.count
    }

    mutating func watch(_ name: String, by watcher: Watcher) {
        watchers[name, default: [:]][ObjectIdentifier(watcher)] = watcher
    }

    /// `watcher` watches nothing any more (it went): the names it was the
    /// last to watch.
    mutating func unwatchAll(by watcher: Watcher) -> [String] {
        let key = ObjectIdentifier(watcher)
        var unwatched: [String] = []
        for name in Array(watchers.keys) where watchers[name]?.removeValue(forKey: key) != nil {
            guard watchers[name]?.isEmpty == true else { continue }
            watchers[name] = nil
            unwatched.append(name)
        }
        return unwatched
    }
}
