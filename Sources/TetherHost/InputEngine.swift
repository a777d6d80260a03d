import TetherBus
import TetherIPC
import TetherLoop

/// What an engine asks of the host: the keyboard extension it stands for.
protocol KeyboardRelay: AnyObject {
    /// Hands `press` to keyboard `name`; `done` gets its answer, or nil when
    /// it cannot answer (not attached, its call failed, its answer refused).
    /// The result cancels the call.
    func send(_ press: KeyPress, to name: String, done: @escaping (KeyAnswer?) -> Void) -> () -> Void
    /// A field of kind `kind` took focus (nil: none has it now).
    func focus(_ kind: FieldKind?, of name: String)
}

/// One IBus engine object (`/org/freedesktop/IBus/Engine/N`, made by the
/// factory for one input context): the context's field, and its keys on
/// their way to keyboard `keyboard` and back (`KeyQueue`). A password or
/// PIN field's keys go back to the application at once, and the keyboard
/// never hears of the field (invariant 28).
final class InputEngine {
    let path: String
    let keyboard: String
    private let bus: BusConnection
    private let loop: EventLoop
    private weak var relay: KeyboardRelay?
    private var exported: BusSubscription?
    private var field = InputField()
    private var queue = KeyQueue()
    /// `ProcessKeyEvent` calls not answered yet, by their key's serial.
    private var calls: [UInt64: BusIncomingCall] = [:]
    /// The key with the keyboard now, and how to call it back.
    private var sending: (serial: UInt64, cancel: () -> Void)?
    private let timer: LoopTimer
    /// Told when the daemon destroys the engine.
    var onDestroy: (() -> Void)?

    init(path: String, keyboard: String, bus: BusConnection, relay: KeyboardRelay) throws(BusError) {
        self.path = path
        self.keyboard = keyboard
        self.bus = bus
        loop = bus.loop
        self.relay = relay
        timer = LoopTimer(loop: bus.loop)
        exported = try bus.export(path: path) { [unowned self] call in self.handle(call) }
    }

    /// Every waiting key to the application, the object gone from the bus.
    func close() {
        perform(queue.drain())
        if field.tellsKeyboard { relay?.focus(nil, of: keyboard) }
        field = InputField()
        exported?.cancel()
        exported = nil
        timer.close()
    }

    /// The keyboard went (crashed, ended): its keys go to the application.
    func keyboardWent() {
        perform(queue.drain())
    }

    private func handle(_ call: BusIncomingCall) -> Bool {
        let arguments = call.message.arguments
        switch (call.message.interface, call.message.member) {
        case (IBusSerialization.engineInterface, "ProcessKeyEvent"):
            guard arguments.count == 3, let keyval = arguments[0].uint32Value, let keycode = arguments[1].uint32Value,
                  let state = arguments[2].uint32Value else { return invalid(call) }
            processKey(keyval, keycode, state, call)
        case (IBusSerialization.engineInterface, "FocusIn"), (IBusSerialization.engineInterface, "FocusInId"):
            setFocus(true)
            call.reply()
            // The client tells its text from now on (and at each change).
            signal("RequireSurroundingText", [])
        case (IBusSerialization.engineInterface, "Enable"):
            call.reply()
            signal("RequireSurroundingText", [])
        case (IBusSerialization.engineInterface, "FocusOut"), (IBusSerialization.engineInterface, "FocusOutId"):
            setFocus(false)
            call.reply()
        case (IBusSerialization.engineInterface, "SetSurroundingText"):
            guard arguments.count == 3, let text = IBusSerialization.string(ofText: arguments[0]),
                  let cursor = arguments[1].uint32Value, let anchor = arguments[2].uint32Value else { return invalid(call) }
            field.surrounding(text, cursor: Int(cursor), anchor: Int(anchor))
            call.reply()
        case (IBusSerialization.engineInterface, "SetCapabilities"):
            field.capabilities = arguments.first?.uint32Value ?? 0
            call.reply()
        case (IBusSerialization.engineInterface, "Reset"):
            // The application dropped its preedit (a click elsewhere).
            field.marked = ""
            call.reply()
        case (IBusSerialization.engineInterface, _):
            // Enable, Disable, SetCursorLocation, properties, candidates,
            // pages: nothing a keyboard without a panel acts on.
            call.reply()
        case ("org.freedesktop.DBus.Properties", "Set"):
            guard arguments.count == 3, arguments[1].stringValue == "ContentType",
                  let fields = arguments[2].unwrapped.fields, fields.count == 2, let purpose = fields[0].uint32Value else {
                call.reply()
                return true
            }
            setPurpose(purpose)
            call.reply()
        case ("org.freedesktop.DBus.Properties", "Get"):
            // FocusId and ActiveSurroundingText: both on.
            call.reply([.variant(.boolean(true))])
        case (IBusSerialization.serviceInterface, "Destroy"):
            call.reply()
            close()
            onDestroy?()
        default:
            return false
        }
        return true
    }

    private func invalid(_ call: BusIncomingCall) -> Bool {
        call.fail(name: "org.freedesktop.DBus.Error.InvalidArgs", "unexpected arguments")
        return true
    }

    private func processKey(_ keyval: UInt32, _ keycode: UInt32, _ state: UInt32, _ call: BusIncomingCall) {
        let kind = field.keyboardKind
        let forKeyboard = kind != nil && state & (IBusKey.releaseMask | IBusKey.shortcutMasks) == 0
        let press = KeyPress(keyval: keyval, keycode: keycode, modifiers: state, text: IBusKey.text(keyval),
                             document: forKeyboard ? field.document(kind ?? .text) : DocumentContext())
        let (serial, actions) = queue.arrived(press, forKeyboard: forKeyboard, now: loop.now)
        calls[serial] = call
        perform(actions)
    }

    private func setFocus(_ focused: Bool) {
        let told = field.tellsKeyboard
        field.focused = focused
        field.marked = ""
        // Each focus starts with no text known: the client tells it anew.
        field.forget()
        if !focused { perform(queue.drain()) }
        tellFocus(wasTold: told)
    }

    private func setPurpose(_ purpose: UInt32) {
        let told = field.tellsKeyboard
        field.setPurpose(purpose)
        // A field that became a password's: what waits for the keyboard
        // goes to the application now.
        if told && !field.tellsKeyboard { perform(queue.drain()) }
        tellFocus(wasTold: told)
    }

    private func tellFocus(wasTold: Bool) {
        if let kind = field.keyboardKind {
            relay?.focus(kind, of: keyboard)
        } else if wasTold {
            relay?.focus(nil, of: keyboard)
        }
    }

    private func perform(_ actions: [KeyQueue.Action]) {
        for action in actions {
            switch action {
            case .send(let serial, let press):
                guard let relay else {
                    // No host side: the key goes back unhandled.
                    perform(queue.answered(serial, nil, now: loop.now))
                    continue
                }
                var answeredAtOnce = false
                let cancel = relay.send(press, to: keyboard) { [weak self] answer in
                    guard let self else { return }
                    answeredAtOnce = true
                    if self.sending?.serial == serial { self.sending = nil }
                    self.perform(self.queue.answered(serial, answer, now: self.loop.now))
                }
                if !answeredAtOnce { sending = (serial, cancel) }
            case .answer(let serial, let answer):
                // Answered without the keyboard (its time ran out): its call ends.
                if let call = sending, call.serial == serial {
                    sending = nil
                    call.cancel()
                }
                if answer.handled { apply(answer.edits) }
                calls.removeValue(forKey: serial)?.reply([.boolean(answer.handled)])
            case .wake(let deadline):
                guard let deadline, !timer.isClosed else {
                    timer.stop()
                    continue
                }
                let now = loop.now
                timer.start(afterMilliseconds: deadline > now ? deadline - now : 0) { [unowned self] in
                    self.perform(self.queue.tick(now: self.loop.now))
                }
            }
        }
    }

    /// The keyboard's edits as IBus's signals, in order.
    private func apply(_ edits: [TextEdit]) {
        for edit in Self.coalesced(edits) {
            switch edit {
            case .insert(let text):
                if !field.marked.isEmpty { preedit("") }
                signal("CommitText", [IBusSerialization.text(text)])
            case .deleteBackward(var count):
                if !field.marked.isEmpty {
                    let fromMarked = min(count, field.marked.count)
                    preedit(String(field.marked.dropLast(fromMarked)))
                    count -= fromMarked
                }
                guard count > 0 else { continue }
                if field.knowsSurroundingText {
                    signal("DeleteSurroundingText", [.int32(Int32(-count)), .uint32(UInt32(count))])
                } else {
                    // The application tells no text: a BackSpace a character.
                    for _ in 0..<count { forward(IBusKey.backSpace, IBusKey.backSpaceCode) }
                }
            case .adjust(let offset):
                let (key, code) = offset < 0 ? (IBusKey.left, IBusKey.leftCode) : (IBusKey.right, IBusKey.rightCode)
                for _ in 0..<abs(offset) { forward(key, code) }
            case .mark(let text):
                preedit(text)
            case .unmark:
                let marked = field.marked
                guard !marked.isEmpty else { continue }
                preedit("")
                signal("CommitText", [IBusSerialization.text(marked)])
            }
        }
    }

    /// Runs of deletions as one (a keyboard deletes a word a character at a time).
    static func coalesced(_ edits: [TextEdit]) -> [TextEdit] {
        var result: [TextEdit] = []
        for edit in edits {
            if case .deleteBackward(let more) = edit, case .deleteBackward(let count)? = result.last {
                result[result.count - 1] = .deleteBackward(count + more)
            } else {
                result.append(edit)
            }
        }
        return result
    }

    private func preedit(_ text: String) {
        field.marked = text
        signal("UpdatePreeditText", [IBusSerialization.text(text), .uint32(UInt32(text.count)), .boolean(!text.isEmpty),
                                     .uint32(0)])
    }

    private func forward(_ keyval: UInt32, _ keycode: UInt32) {
        signal("ForwardKeyEvent", [.uint32(keyval), .uint32(keycode), .uint32(0)])
        signal("ForwardKeyEvent", [.uint32(keyval), .uint32(keycode), .uint32(IBusKey.releaseMask)])
    }

    private func signal(_ member: String, _ arguments: [BusValue]) {
        try? bus.emit(path: path, interface: IBusSerialization.engineInterface, member: member, arguments)
    }
}
