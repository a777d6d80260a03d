/// The extensions attached to the host (those that said hello), by
/// connection, with the indexes its hot paths need kept in step: by name,
/// the count of those started by hand, the read-only keyboards (every
/// request checks its peer against them) and the notification extensions
/// (every push looks at them). No lookup walks them all.
struct AttachmentRegistry {
    private var byConnection: [ObjectIdentifier: AttachedExtension] = [:]
    private var byName: [String: ObjectIdentifier] = [:]
    private var readOnly: [ObjectIdentifier: AttachedExtension] = [:]
    private var notifying: [ObjectIdentifier: AttachedExtension] = [:]
    /// Attached by hand (not the host's launches): bounded by the client limit.
    private(set) var byHandCount = 0

    subscript(connection: ObjectIdentifier) -> AttachedExtension? { byConnection[connection] }

    subscript(name name: String) -> AttachedExtension? { byName[name].flatMap { byConnection[$0] } }

    /// The connection attached under `name`.
    func connection(named name: String) -> ObjectIdentifier? { byName[name] }

    var all: Dictionary<ObjectIdentifier, AttachedExtension>.Values { byConnection.values }
    var names: Dictionary<String, ObjectIdentifier>.Keys { byName.keys }
    var readOnlyKeyboards: Dictionary<ObjectIdentifier, AttachedExtension>.Values { readOnly.values }
    var notifications: Dictionary<ObjectIdentifier, AttachedExtension>.Values { notifying.values }

    mutating func add(_ entry: AttachedExtension, _ key: ObjectIdentifier) {
        byConnection[key] = entry
        byName[entry.name] = key
        if !entry.managed { byHandCount += 1 }
        if entry.role == .keyboard, !entry.openAccess { readOnly[key] = entry }
        if entry.role == .notification { notifying[key] = entry }
    }

    mutating func remove(_ key: ObjectIdentifier) -> AttachedExtension? {
        guard let entry = byConnection.removeValue(forKey: key) else { return nil }
        if byName[entry.name] == key { byName[entry.name] = nil }
        if !entry.managed { byHandCount -= 1 }
        readOnly[key] = nil
        notifying[key] = nil
        return entry
    }
}
