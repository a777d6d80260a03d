#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import TetherBus
import TetherGroup
import TetherIPC
import TetherLoop

/// The host's keyboards as input methods: one connection to ibus-daemon's
/// own bus, a component registered with one engine per keyboard extension
/// (`tether:NAME`), and the factory the daemon asks for an engine per input
/// context. The daemon's address files are watched (inotify), so a daemon
/// that starts, or starts again, later gets the engines again. The
/// extensions never see the bus: their keys come over their links.
final class InputMethodBridge {
    /// Engines (input contexts) at once; past it the daemon is refused one.
    static let maximumEngines = 256
    static let componentName = "org.freedesktop.IBus.Tether"
    static let enginePrefix = "tether:"

    private(set) var status: InputMethodStatus {
        didSet { if status != oldValue { onStatus(status) } }
    }
    private let loop: EventLoop
    private let keyboards: [IBusSerialization.Engine]
    private let version: String
    private weak var relay: KeyboardRelay?
    private let onStatus: (InputMethodStatus) -> Void
    private var bus: BusConnection?
    private var engines: [String: InputEngine] = [:]
    private var lastEngine = 0
    private var watcher: Inotify?
    /// The directory watched: the address files', or the nearest parent
    /// that exists until the daemon makes it.
    private var watched: String?
    private let later: LoopTimer

    init(loop: EventLoop, keyboards: [IBusSerialization.Engine], version: String, relay: KeyboardRelay,
         onStatus: @escaping (InputMethodStatus) -> Void) {
        self.loop = loop
        self.keyboards = keyboards
        self.version = version
        self.relay = relay
        self.onStatus = onStatus
        status = InputMethodStatus(state: .connecting)
        later = LoopTimer(loop: loop)
        watchAddresses()
        // On the loop's next turn: whoever started the host hears it is
        // ready before anything of the input method.
        later.start(afterMilliseconds: 0) { [unowned self] in self.connect() }
    }

    func close() {
        disconnect()
        watcher?.close()
        watcher = nil
        later.close()
    }

    /// Keyboard `name` went: the keys waiting for it go to the applications.
    func keyboardWent(_ name: String) {
        for engine in engines.values where engine.keyboard == name { engine.keyboardWent() }
    }

    private func connect() {
        guard bus == nil else { return }
        let address: String
        switch InputMethodAddress.resolve() {
        case .success(let found): address = found
        case .failure(let notFound): return status = InputMethodStatus(state: .noDaemon, reason: notFound.reason)
        }
        let bus: BusConnection
        do {
            bus = try BusConnection(loop: loop, address: address)
            try bus.export(path: IBusSerialization.factoryPath) { [unowned self] call in self.factory(call) }
        } catch {
            return status = InputMethodStatus(state: .noDaemon, reason: error.reason)
        }
        self.bus = bus
        bus.onClose = { [unowned self] error in
            let wasRegistered = self.status.state == .registered
            self.disconnect()
            self.status = InputMethodStatus(state: .noDaemon, reason: "ibus-daemon went away (\(error.reason))")
            // A daemon restarted may have written its new address already;
            // one that never let us register is not tried again until it does.
            if wasRegistered { self.connect() }
        }
        status = InputMethodStatus(state: .connecting, reason: "registering the engines")
        let names = keyboards.map(\.name)
        bus.call(destination: IBusSerialization.daemon, path: IBusSerialization.daemonPath,
                 interface: IBusSerialization.daemon, member: "RegisterComponent",
                 [IBusSerialization.component(name: Self.componentName, version: version, engines: keyboards)],
                 timeoutMilliseconds: 5_000) { [unowned self] result in
            switch result {
            case .success:
                self.status = InputMethodStatus(state: .registered, engines: names)
            case .failure(let error):
                self.disconnect()
                self.status = InputMethodStatus(state: .noDaemon, reason: "ibus-daemon refused the engines: \(error.reason)")
            }
        }
    }

    private func disconnect() {
        for engine in engines.values { engine.close() }
        engines = [:]
        bus?.close()
        bus = nil
    }

    /// `CreateEngine(name)`: an engine for one input context.
    private func factory(_ call: BusIncomingCall) -> Bool {
        guard call.message.interface == IBusSerialization.factoryInterface, call.message.member == "CreateEngine" else {
            return false
        }
        guard let bus, let name = call.message.arguments.first?.stringValue, name.hasPrefix(Self.enginePrefix),
              keyboards.contains(where: { $0.name == name }), let relay else {
            call.fail(name: "org.freedesktop.DBus.Error.Failed", "no such engine")
            return true
        }
        guard engines.count < Self.maximumEngines else {
            call.fail(name: "org.freedesktop.DBus.Error.LimitsExceeded", "\(Self.maximumEngines) engines, the host's limit")
            return true
        }
        lastEngine += 1
        let path = "/org/freedesktop/IBus/Engine/Tether/\(lastEngine)"
        do {
            let engine = try InputEngine(path: path, keyboard: String(name.dropFirst(Self.enginePrefix.count)), bus: bus,
                                         relay: relay)
            engine.onDestroy = { [unowned self] in self.engines[path] = nil }
            engines[path] = engine
            call.reply([.objectPath(path)])
        } catch {
            call.fail(name: "org.freedesktop.DBus.Error.Failed", error.reason)
        }
        return true
    }

    /// Watches the address files' directory (or the nearest parent there
    /// is): a file written there is a daemon started, to register with.
    private func watchAddresses() {
        guard let directory = InputMethodAddress.directory() else { return }
        var candidate = directory
        // The directory, ibus/, then the configuration directory itself.
        for _ in 0..<3 where access(candidate, F_OK) != 0 {
            candidate = String(candidate[..<(candidate.lastIndex(of: "/") ?? candidate.startIndex)])
        }
        guard !candidate.isEmpty, candidate != watched else { return }
        watcher?.close()
        watcher = nil
        watched = nil
        do throws(Errno) {
            let inotify = try Inotify(loop: loop)
            _ = try inotify.watch(candidate, mask: UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR))
            try inotify.start { [unowned self] _ in
                // Not from inside its own callback: the watch may be replaced.
                self.later.start(afterMilliseconds: 0) { [unowned self] in
                    guard self.watcher != nil else { return }
                    if self.watched != directory { self.watchAddresses() }
                    if self.bus == nil { self.connect() }
                }
            }
            watcher = inotify
            watched = candidate
        } catch {
            watcher = nil
        }
    }
}
