#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// `sd_notify` and the service manager's watchdog, against a datagram
/// socket of the test's own where a manager would listen (no manager, no
/// host): what is sent, when nothing is, and that a manager that stops
/// reading never blocks the sender.
@Suite(.timed) struct SystemdNotifierTests {
    /// To a path, and to an abstract name ('@', as systemd may pass it).
    @Test func aStateIsOneDatagramToTheSocketNamed() throws {
        let directory = try TemporaryDirectory("tether-notify")
        for notify in [try NotifySocket(in: directory.path), try NotifySocket(abstract: "tether-notify-\(getpid())")] {
            #expect(SystemdNotifier.notify("READY=1", environment: ["NOTIFY_SOCKET": notify.path]), "\(notify.path)")
            #expect(notify.next(timeout: 10) == "READY=1", "\(notify.path)")
        }
    }

    /// No variable, an empty one, or a path no socket address can hold: nothing is sent.
    @Test func withoutAUsableSocketNothingIsSent() {
        for environment in [[:], ["NOTIFY_SOCKET": ""], ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 120)]] {
            #expect(!SystemdNotifier.notify("READY=1", environment: environment), "\(environment)")
        }
    }

    /// A manager that reads nothing: once its socket is full, a state is
    /// lost (false), never waited for. The sends run off a loop, which
    /// gives up on them after 10 s: a send that blocks fails the test.
    @Test func aManagerThatStopsReadingNeverBlocks() async throws {
        let notify = try NotifySocket(abstract: "tether-full-\(getpid())")
        let path = notify.path
        let (sent, last): (Int, Bool) = try await onLoop { loop, finish in
            nonisolated(unsafe) let finish = finish
            try DetachedThread.start {
                var sent = 0
                while sent < 100_000, SystemdNotifier.notify("WATCHDOG=1", environment: ["NOTIFY_SOCKET": path]) { sent += 1 }
                let result = (sent, SystemdNotifier.notify("STOPPING=1", environment: ["NOTIFY_SOCKET": path]))
                loop.execute { finish(result) }
            }
        }
        #expect(sent > 0 && sent < 100_000, "\(sent) sent before the socket was full")
        #expect(!last)
        // Full, not failing for another reason: every one sent is there.
        #expect(notify.drain() == sent)
    }

    /// The watchdog pings at half the interval asked, only where it is
    /// asked of this process.
    @Test func theWatchdogPingsAtHalfItsIntervalWhereAskedOfThisProcess() async throws {
        let notify = try NotifySocket(abstract: "tether-watchdog-\(getpid())")
        let asked = ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "40000"]
        let refused = [["NOTIFY_SOCKET": notify.path], ["WATCHDOG_USEC": "40000"], asked.merging(["WATCHDOG_USEC": "0"]) { $1 },
                       asked.merging(["WATCHDOG_PID": String(pidOfNoProcess)]) { $1 }]
        let made: [Bool] = try await onLoop { loop, finish in
            finish(refused.map { ServiceWatchdog(loop: loop, environment: $0) != nil })
        }
        #expect(made == [false, false, false, false], "\(refused)")
        let environment = asked.merging(["WATCHDOG_PID": String(getpid())]) { $1 }
        // The pings are read off the loop, which runs the watchdog's timer meanwhile.
        let (interval, pings, gap): (UInt64?, [String?], UInt64) = try await onLoop { loop, finish in
            nonisolated(unsafe) let watchdog = ServiceWatchdog(loop: loop, environment: environment)
            nonisolated(unsafe) let finish = finish
            try DetachedThread.start {
                let first = notify.next(timeout: 10)
                let start = MonotonicClock.nanoseconds()
                let second = notify.next(timeout: 10)
                let gap = (MonotonicClock.nanoseconds() - start) / 1_000_000
                loop.execute { finish((watchdog?.intervalMilliseconds, [first, second], gap)) }
            }
        }
        #expect(interval == 20)
        #expect(pings == ["WATCHDOG=1", "WATCHDOG=1"])
        #expect(gap >= 15, "pings \(gap) ms apart, at an interval of 20 ms")
    }
}
