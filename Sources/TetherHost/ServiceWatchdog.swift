import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// The service manager's watchdog (`WatchdogSec=`): `WATCHDOG=1` at half
/// the interval `WATCHDOG_USEC` gives, from a timer on the host's loop, so
/// a loop that is stuck (or a host that is stopped) is what stops the
/// pings and gets the host killed and restarted.
package final class ServiceWatchdog {
    private let timer: LoopTimer
    package let intervalMilliseconds: UInt64

    /// Nil where no watchdog is asked of this process: no interval, no
    /// `NOTIFY_SOCKET`, or a `WATCHDOG_PID` that is another process.
    package init?(loop: EventLoop, environment: [String: String]) {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0,
              environment["NOTIFY_SOCKET"]?.isEmpty == false else { return nil }
        if let pid = environment["WATCHDOG_PID"], !pid.isEmpty, Int32(pid) != getpid() { return nil }
        intervalMilliseconds = max(1, microseconds / 2_000)
        timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: intervalMilliseconds, repeatMilliseconds: intervalMilliseconds) {
            SystemdNotifier.notify("WATCHDOG=1", environment: environment)
        }
    }

    package func stop() { timer.close() }
}
