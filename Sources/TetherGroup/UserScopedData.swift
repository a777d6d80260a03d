#if canImport(Glibc)
import Glibc
#endif
import TetherJSON

/// Shared data that belongs to the user logged in when it was written:
/// the defaults keys and `shared/` files an app marks user-scoped, listed
/// in `GROUP/user-scoped.json`. When a different user logs in, `clear()`
/// removes them, so one user never sees another's orders or messages.
/// The marks stay: they say what kind of data a key is, not whose.
public struct UserScopedData: Sendable {
    public let store: SharedStore
    let group: GroupDirectory

    public init(group: GroupDirectory) throws(GroupError) {
        store = SharedStore(path: group.storePath("user-scoped"), lockPath: try group.preparedStoreLockPath("user-scoped"))
        self.group = group
    }

    public func markKey(_ key: String) throws(GroupError) {
        try SharedStore.validate(key: key)
        try mark("keys", key)
    }

    public func markFile(_ name: String) throws(GroupError) {
        guard FeatureName.isValid(name) else { throw .invalidFeatureName(name) }
        try mark("files", name)
    }

    private func mark(_ list: String, _ name: String) throws(GroupError) {
        if marked(list).contains(name) { return }
        try store.update { values in
            var names = values[list]?.arrayValue ?? []
            if !names.contains(.string(name)) { names.append(.string(name)) }
            values[list] = .array(names)
        }
    }

    private func marked(_ list: String) -> [String] {
        ((try? store.values())?[list]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Removes every marked key from the defaults, in one atomic change
    /// (watchers hear of it as of any other), and every marked shared file.
    /// Returns what was there.
    public func clear() throws(GroupError) -> (keys: [String], files: [String]) {
        let keys = marked("keys")
        var removedKeys: [String] = []
        if !keys.isEmpty {
            removedKeys = try SharedStore.defaults(in: group).update { defaults in
                keys.filter { defaults.removeValue(forKey: $0) != nil }
            }
        }
        var removedFiles: [String] = []
        for name in marked("files") where FeatureName.isValid(name) {
            if unlink(group.path + "/shared/" + name) == 0 { removedFiles.append(name) }
        }
        return (removedKeys, removedFiles)
    }
}
