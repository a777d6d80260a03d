import TetherGroup
import TetherJSON

/// The group's defaults (`tether defaults`), as an extension reads and
/// writes them: `try context.defaults["greeting"]?.stringValue`. Every
/// failure is an `ExtensionError`; one store per process, so a read of an
/// unchanged file costs one `lstat`.
public struct SharedDefaults: Sendable {
    let store: SharedStore

    /// The value for `key`, nil when it has none.
    public subscript(key: String) -> JSONValue? {
        get throws(ExtensionError) { try value(forKey: key) }
    }

    /// The value for `key`, nil when it has none (the subscript's long form).
    public func value(forKey key: String) throws(ExtensionError) -> JSONValue? {
        do { return try store.value(forKey: key) } catch { throw .environment(error.description) }
    }

    /// Every key and value.
    public func values() throws(ExtensionError) -> [String: JSONValue] {
        do { return try store.values() } catch { throw .environment(error.description) }
    }

    /// Sets `key`, atomically and under the store's lock.
    public func set(_ value: JSONValue, forKey key: String) throws(ExtensionError) {
        do { try store.set(value, forKey: key) } catch { throw .environment(error.description) }
    }

    /// Removes `key`; false when it had no value.
    @discardableResult
    public func removeValue(forKey key: String) throws(ExtensionError) -> Bool {
        do { return try store.removeValue(forKey: key) } catch { throw .environment(error.description) }
    }
}
