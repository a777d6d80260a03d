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
@Suite struct SystemdNotifierTests {
    /// A bound datagram socket in a temporary directory, as systemd's
    /// `NOTIFY_SOCKET`; reads wait at most 10 s.
    final class Listener: @unchecked Sendable {  // its descriptor is only read
        let directory: TemporaryDirectory
        let path: String
        let fd: Int32

        init() throws {
            directory = try TemporaryDirectory("tether-notify")
            path = directory.path + "/notify"
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var wait = timeval(tv_sec: 10, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            let bound = withUnixAddress(path) { bind(fd, $0, $1) }
            try #require(fd >= 0 && bound == 0)
        }

        deinit { close(fd) }

        /// The next datagram, or nil after 10 s.
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count < 0 ? nil : String(decoding: buffer.prefix(count), as: UTF8.self)
        }
    }

    @Test func aStateIsOneDatagramToTheSocketNamed() throws {
        let listener = try Listener()
        #expect(SystemdNotifier.notify("READY=1", environment: ["NOTIFY_SOCKET": listener.path]))
        #expect(listener.receive() == "READY=1")
    }

    /// No variable, an empty one, or a path no socket address can hold: nothing is sent.
    @Test func withoutAUsableSocketNothingIsSent() {
        for environment in [[:], ["NOTIFY_SOCKET": ""], ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 120)]] {
            #expect(!SystemdNotifier.notify("READY=1", environment: environment), "\(environment)")
        }
    }

    /// A manager that reads nothing: once its socket is full, a state is
    /// lost (false), never waited for (the sends run off the loop, which
    /// gives up on them after 10 s).
    @Test func aManagerThatStopsReadingNeverBlocks() async throws {
        let listener = try Listener()
        let (sent, last): (Int, Bool) = try await onLoop { loop, finish in
            nonisolated(unsafe) let finish = finish
            try DetachedThread.start {
                var sent = 0
                while sent < 100_000, SystemdNotifier.notify("WATCHDOG=1", environment: ["NOTIFY_SOCKET": listener.path]) { sent += 1 }
                let result = (sent, SystemdNotifier.notify("STOPPING=1", environment: ["NOTIFY_SOCKET": listener.path]))
                loop.execute { finish(result) }
            }
        }
        #expect(sent < 100_000, "the socket never filled")
        #expect(!last)
    }

    /// The watchdog pings at half the interval asked, only where it is
    /// asked of this process.
    @Test func theWatchdogPingsAtHalfItsIntervalWhereAskedOfThisProcess() async throws {
        let listener = try Listener()
        let asked = ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "40000"]
        let refused = [["NOTIFY_SOCKET": listener.path], ["WATCHDOG_USEC": "40000"], asked.merging(["WATCHDOG_USEC": "0"]) { $1 },
                       asked.merging(["WATCHDOG_PID": String(pidOfNoProcess)]) { $1 }]
        let made: [Bool] = try await onLoop { loop, finish in
            finish(refused.map { ServiceWatchdog(loop: loop, environment: $0) != nil })
        }
        #expect(made == [false, false, false, false], "\(refused)")
        let environment = asked.merging(["WATCHDOG_PID": String(getpid())]) { $1 }
        // The pings are read off the loop, which runs the watchdog's timer meanwhile.
        let (interval, pings): (UInt64?, [String?]) = try await onLoop { loop, finish in
            nonisolated(unsafe) let watchdog = ServiceWatchdog(loop: loop, environment: environment)
            nonisolated(unsafe) let finish = finish
            try DetachedThread.start {
                let pings = [listener.receive(), listener.receive()]
                loop.execute { finish((watchdog?.intervalMilliseconds, pings)) }
            }
        }
        #expect(interval == 20)
        #expect(pings == ["WATCHDOG=1", "WATCHDOG=1"])
    }
}
