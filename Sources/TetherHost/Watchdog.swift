import TetherIPC
import TetherLoop

/// Pings one attached extension every period (`extension.ping`, protocol 2)
/// and calls `onUnresponsive` once when a ping is still unanswered at the
/// next tick: a hung extension is caught between one and two periods after
/// it stopped answering, as VS Code flags an unresponsive extension host.
/// Ticks with every other watchdog of its period (`WatchdogClock`). Lives
/// on the host's loop.
final class Watchdog: WatchdogTicking {
    let periodMilliseconds: UInt64
    private let connection: RPCConnection
    private weak var clock: WatchdogClock?
    private var outstanding: JSONValue?
    private var fired = false
    private let onUnresponsive: () -> Void

    init(clock: WatchdogClock, connection: RPCConnection, periodMilliseconds: UInt64, onUnresponsive: @escaping () -> Void) {
        self.connection = connection
        self.periodMilliseconds = periodMilliseconds
        self.onUnresponsive = onUnresponsive
        self.clock = clock
        clock.add(self)
    }

    func tick() {
        guard !fired, !connection.isClosed else { return stop() }
        if outstanding != nil {
            fired = true
            stop()
            return onUnresponsive()
        }
        // Any answer, an error included, shows its loop turns.
        outstanding = connection.call(ExtensionMethod.ping, [:]) { [weak self] _ in self?.outstanding = nil }
    }

    func stop() {
        clock?.remove(self)
        if let outstanding, !connection.isClosed { connection.cancel(outstanding) }
        outstanding = nil
    }
}
