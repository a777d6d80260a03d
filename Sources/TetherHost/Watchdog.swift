import TetherIPC
import TetherLoop

/// Pings one attached extension every period (`extension.ping`, protocol 2)
/// and calls `onUnresponsive` once when a ping is still unanswered at the
/// next tick: a hung extension is caught between one and two periods after
/// it stopped answering, as VS Code flags an unresponsive extension host.
/// Lives on the host's loop.
final class Watchdog {
    private let connection: RPCConnection
    private let timer: LoopTimer
    private var outstanding: JSONValue?
    private var fired = false
    private let onUnresponsive: () -> Void

    init(loop: EventLoop, connection: RPCConnection, periodMilliseconds: UInt64, onUnresponsive: @escaping () -> Void) {
        self.connection = connection
        self.onUnresponsive = onUnresponsive
        timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: periodMilliseconds, repeatMilliseconds: periodMilliseconds) { [weak self] in
            self?.tick()
        }
    }

    private func tick() {
        guard !fired, !connection.isClosed else { return stop() }
        if outstanding != nil {
            fired = true
            stop()
            return onUnresponsive()
        }
        // Any answer, an error included, shows its loop turns.
        outstanding = connection.call(ExtensionMethod.ping, [:]) { [weak self] _ in self?.outstanding = nil }
    }

    deinit { timer.close() }

    func stop() {
        timer.close()
        if let outstanding, !connection.isClosed { connection.cancel(outstanding) }
        outstanding = nil
    }
}
