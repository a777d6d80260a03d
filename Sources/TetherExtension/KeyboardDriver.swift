import TetherIPC
import TetherLoop

/// Feeds standard input to a keyboard, line by line, on the loop.
/// Not generic over the keyboard: the reader thread's closure may only
/// capture Sendable types, and the driver is used on the loop only.
final class KeyboardDriver: RoleDriver, @unchecked Sendable {
    private let keyPressed: (String, ExtensionContext) -> Void
    private let context: ExtensionContext

    init(context: ExtensionContext, keyPressed: @escaping (String, ExtensionContext) -> Void) {
        self.keyPressed = keyPressed
        self.context = context
    }

    /// Keys wait until the host link has settled (attached, or no host),
    /// so what a key may do does not depend on how fast the host answered.
    private var reading = false
    private var settleTimer: LoopTimer?

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
        StandardInputReader.start { [self] event in
            context.loop.execute { self.received(event) }
        }
    }

    /// Keys are handled in order, each once the host has answered what
    /// the previous one asked: "start X" then "is X running?" reads as typed.
    private var waiting: [StandardInputReader.Event] = []
    private var busy = false

    private func received(_ event: StandardInputReader.Event) {
        waiting.append(event)
        handleNext()
    }

    private func handleNext() {
        while !busy, !waiting.isEmpty {
            switch waiting.removeFirst() {
            case .line(let text):
                keyPressed(text, context)
            case .end:
                // A host's child reads /dev/null: it keeps running for the host.
                if !context.identity.isManaged { context.finish() }
                return
            }
            if context.hasPendingCalls {
                busy = true
                context.whenIdle { [self] in
                    busy = false
                    handleNext()
                }
            }
        }
    }

    func hostEvent(_ event: HostLink.Event) {
        switch event {
        case .attached, .detached:
            startReading()
        case .message(let method, _, let respond):
            if method != HostNotification.stopping { respond(.failure(.methodNotFound(method))) }
        }
    }
}
