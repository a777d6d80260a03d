import TetherIPC
import TetherLoop

/// Feeds standard input to a keyboard, line by line: each `keyPressed` runs
/// to its end before the next line goes in, so "start X" then "is X
/// running?" reads as typed. One that throws has its error printed.
@ExtensionActor
final class KeyboardDriver<K: Keyboard>: RoleDriver {
    private let keyboard: K
    private let context: ExtensionContext

    init(keyboard: K, context: ExtensionContext) {
        self.keyboard = keyboard
        self.context = context
    }

    /// Keys wait until the host link has settled (attached, or no host),
    /// so what a key may do does not depend on how fast the host answered.
    private var reading = false
    private var settleTimer: LoopTimer?
    private var waiting: [StandardInputReader.Event] = []
    private var busy = false

    func begin() {
        guard !reading else { return }
        let timer = LoopTimer(loop: context.loop)
        settleTimer = timer
        timer.start(afterMilliseconds: HostLink.queueTimeout) { [unowned self] in self.startReading() }
    }

    private func startReading() {
        settleTimer?.close()
        settleTimer = nil
        guard !reading else { return }
        reading = true
        // The reader thread hands each line to the loop, in order.
        StandardInputReader.start { [self] event in
            ExtensionActor.task { self.received(event) }
        }
    }

    private func received(_ event: StandardInputReader.Event) {
        waiting.append(event)
        handleNext()
    }

    private func handleNext() {
        guard !busy, !waiting.isEmpty else { return }
        switch waiting.removeFirst() {
        case .line(let text):
            busy = true
            ExtensionActor.task { [self] in
                do {
                    try await keyboard.keyPressed(text, in: context)
                } catch {
                    context.log("keyPressed failed: \(error)")
                }
                busy = false
                handleNext()
            }
        case .end:
            // A host's child reads /dev/null: it keeps running for the host.
            if !context.identity.isManaged { context.finish() }
        }
    }

    func hostEvent(_ event: HostLink.Event) {
        switch event {
        case .attached, .detached:
            startReading()
        case .incompatible:
            break
        case .message(let method, let params, let respond):
            switch method {
            case KeyboardProtocol.key.name:
                let press: KeyPress
                do throws(RPCError) { press = try KeyPress(wire: params) } catch { return respond(.failure(error)) }
                key(press, respond: respond)
            case KeyboardProtocol.focus.name:
                // Nothing is kept between keys: each key brings its field's context.
                break
            default:
                respond(.failure(.methodNotFound(method)))
            }
        }
    }

    /// One key of the focused field: its own proxy, whose edits go back with
    /// the answer. Keys come one at a time; one whose handling outlives its
    /// deadline was answered by the host already, and its edits are dropped there.
    private func key(_ press: KeyPress, respond: @escaping RPCConnection.Respond) {
        let event = KeyEvent(characters: press.text ?? "", keyCode: press.keyval)
        ExtensionActor.task { [self] in
            let proxy = TextDocumentProxy(press.document)
            let handled = await keyboard.handle(event, with: proxy, in: context)
            respond(.success(KeyAnswer(handled: handled, edits: handled ? proxy.edits : []).wire))
        }
    }
}
