import TetherIPC
import TetherLoop
import TetherManifest

/// The keyboards as input methods (IBus): the bridge made at start when
/// the host has keyboard extensions, and the host's side of each engine:
/// a key goes to the keyboard over its link (launched when a field takes
/// focus), and its answer comes back.
extension Host: KeyboardRelay {
    func startInputMethod() {
        let keyboards = configuration.manifests.filter { $0.role == .keyboard }
        guard !keyboards.isEmpty else { return }
        let logger = self.logger
        inputMethod = InputMethodBridge(
            loop: loop,
            keyboards: keyboards.map { manifest in
                IBusSerialization.Engine(name: InputMethodBridge.enginePrefix + manifest.name,
                                         longName: manifest.displayName ?? manifest.name,
                                         description: "A Tether keyboard extension (\(manifest.name))",
                                         language: manifest.language ?? "")
            },
            version: TetherVersion.current, relay: self,
            onStatus: { status in
                // Settled states only: what `tether status` then says.
                if status.state != .connecting { logger.info("\(status.text)") }
            })
    }

    var inputMethodStatus: InputMethodStatus {
        inputMethod?.status ?? InputMethodStatus(state: .noKeyboards)
    }

    func stopInputMethod() {
        inputMethod?.close()
        inputMethod = nil
    }

    func send(_ press: KeyPress, to name: String, done: @escaping (KeyAnswer?) -> Void) -> () -> Void {
        guard !isStopping, let entry = attachedEntry(named: name), isUsable(entry) else {
            // Not there: this key goes to the application, and the keyboard
            // is launched for the next.
            if !isStopping { supervisor(named: name)?.demand() }
            done(nil)
            return {}
        }
        let supervisor = entry.managed ? supervisor(named: name) : nil
        supervisor?.noteWork(began: true)
        var finished = false
        let id = entry.connection.call(KeyboardProtocol.key, press) { result in
            guard !finished else { return }
            finished = true
            supervisor?.noteWork(began: false)
            done(try? result.get())
        }
        return {
            guard !finished else { return }
            finished = true
            supervisor?.noteWork(began: false)
            entry.connection.cancel(id)
        }
    }

    func focus(_ kind: FieldKind?, of name: String) {
        // A field to type into: the keyboard is launched now, ready for its first key.
        if kind != nil, !isStopping { supervisor(named: name)?.demand() }
        attachedEntry(named: name)?.connection.notify(KeyboardProtocol.focus, KeyboardFocus(kind: kind))
    }
}
