/// The host's supervisors, one per manifest: every one, by name, and the
/// kinds the host asks about on hot paths (keyboards without open access,
/// whose peers every request checks; notification extensions, which every
/// push looks at). Filled once at start; what each supervisor does is its own.
struct SupervisorTable {
    private(set) var all: [ExtensionSupervisor] = []
    private var byName: [String: ExtensionSupervisor] = [:]
    private(set) var readOnlyKeyboards: [ExtensionSupervisor] = []
    private(set) var notifications: [ExtensionSupervisor] = []

    mutating func add(_ supervisor: ExtensionSupervisor) {
        let manifest = supervisor.manifest
        all.append(supervisor)
        byName[manifest.name] = supervisor
        if manifest.role == .keyboard, !manifest.openAccess { readOnlyKeyboards.append(supervisor) }
        if manifest.role == .notification { notifications.append(supervisor) }
    }

    subscript(name: String) -> ExtensionSupervisor? { byName[name] }

    var count: Int { all.count }

    /// The supervisor whose launch `process` is, or was started by.
    func owner(of process: PeerProcess) -> ExtensionSupervisor? { all.first { $0.owns(process) } }

    /// The read-only keyboard whose launch `process` is, if any.
    func readOnlyKeyboard(owning process: PeerProcess) -> ExtensionSupervisor? {
        readOnlyKeyboards.first { $0.owns(process) }
    }

    /// The widgets' names, sorted.
    var widgetNames: [String] { all.filter { $0.manifest.role == .widget }.map(\.manifest.name).sorted() }
}
