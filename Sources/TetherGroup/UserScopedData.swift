#if canImport(Glibc)
import Glibc
#endif
import TetherJSON

/// Shared data that belongs to the user logged in when it was written:
/// the defaults keys and `shared/` files an app marks user-scoped, listed
/// in `GROUP/stores/user-scoped.json`. When a different user logs in, `clear()`
/// removes them, so one user never sees another's orders or messages.
/// The marks stay: they say what kind of data a key is, not whose.
package struct UserScopedData: Sendable {
    package let store: SharedStore
    let group: GroupDirectory

    package init(group: GroupDirectory) throws(GroupError) {
        store = SharedStore(path: try group.preparedStorePath("user-scoped"), lockPath: try group.preparedStoreLockPath("user-scoped"),
                            fullMarker: GroupDirectory.fullMarkerPath(of: group.path))
        self.group = group
    }

    package func markKey(_ key: String) throws(GroupError) {
        try SharedStore.validate(key: key)
        try mark("keys", key)
    }

    package func markFile(_ name: String) throws(GroupError) {
        guard FeatureName.isValid(name) else { throw .invalidFeatureName(name) }
        try mark("files", name)
    }

    private func mark(_ list: String, _ name: String) throws(GroupError) {
        if (try? marked(list))?.contains(name) == true { return }
        try store.update { values in
            var names = values[list]?.arrayValue ?? []
            if !names.contains(.string(name)) { names.append(.string(name)) }
            values[list] = .array(names)
        }
    }

    private func marked(_ list: String) throws(GroupError) -> [String] {
        (try store.values()[list]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Removes every marked key from the defaults, in one atomic change
    /// (watchers hear of it as of any other), and every marked shared file.
    /// Returns what was there.
    package func clear() throws(GroupError) -> (keys: [String], files: [String]) {
        let keys = try marked("keys")
        var removedKeys: [String] = []
        if !keys.isEmpty {
            removedKeys = try SharedStore.defaults(in: group).update { defaults in
                keys.filter { defaults.removeValue(forKey: $0) != nil }
            }
        }
        var removedFiles: [String] = []
        let files = try marked("files")
        // Through the directory itself, never a path: an extension may have
        // replaced `shared` with a symlink to somewhere only this
        // (unconfined) process may write. Not a real directory: nothing of
        // the group's to remove.
        let shared = open(group.path + "/shared", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard shared >= 0 else { return (removedKeys, []) }
        defer { close(shared) }
        for name in files where FeatureName.isValid(name) {
            if unlinkat(shared, name, 0) == 0 { removedFiles.append(name) }
        }
        return (removedKeys, removedFiles)
    }
}
