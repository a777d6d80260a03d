import Glibc
import Testing
import TetherTestSupport
@testable import TetherHost

/// Finding ibus-daemon as IBus's own clients do, from an environment given
/// as a table (no process's own changed) and address files in a scratch
/// directory, hostile ones included.
@Suite struct InputMethodAddressTests {
    func environment(_ values: [String: String]) -> (String) -> String? { { values[$0] } }

    @Test func theDirectoryIsXDGConfigHomesElseHomesAndNeverRelative() {
        #expect(InputMethodAddress.directory(environment(["XDG_CONFIG_HOME": "/c", "HOME": "/h"])) == "/c/ibus/bus")
        #expect(InputMethodAddress.directory(environment(["XDG_CONFIG_HOME": "c", "HOME": "/h"])) == "/h/.config/ibus/bus")
        #expect(InputMethodAddress.directory(environment(["HOME": "h"])) == nil)
        #expect(InputMethodAddress.directory(environment([:])) == nil)
    }

    @Test func theDisplayIsNamedAsIBusNamesItsFile() {
        #expect(InputMethodAddress.displayName(environment(["WAYLAND_DISPLAY": "wayland-1", "DISPLAY": ":0"])) == "unix-wayland-1")
        #expect(InputMethodAddress.displayName(environment(["DISPLAY": ":0"])) == "unix-0")
        #expect(InputMethodAddress.displayName(environment(["DISPLAY": "box:1.0"])) == "box-1")
        #expect(InputMethodAddress.displayName(environment(["DISPLAY": "box:"])) == nil)
        #expect(InputMethodAddress.displayName(environment(["DISPLAY": "nocolon"])) == nil)
        #expect(InputMethodAddress.displayName(environment([:])) == nil)
    }

    /// Only a regular file naming a daemon that runs: a dead daemon's, a
    /// FIFO (which would block a reader) and a symlink are passed over.
    @Test func anAddressCountsOnlyFromARegularFileOfADaemonThatRuns() throws {
        let scratch = try TemporaryDirectory("tether-ibus-address")
        let live = scratch.path + "/live"
        try writeFile(live, "# written by ibus-daemon\nIBUS_ADDRESS=unix:path=/tmp/ibus-x\nIBUS_DAEMON_PID=\(getpid())\n")
        #expect(InputMethodAddress.liveAddress(in: live) == "unix:path=/tmp/ibus-x")
        let dead = scratch.path + "/dead"
        try writeFile(dead, "IBUS_ADDRESS=unix:path=/tmp/ibus-y\nIBUS_DAEMON_PID=\(pidOfNoProcess)\n")
        #expect(InputMethodAddress.liveAddress(in: dead) == nil)
        let noPID = scratch.path + "/no-pid"
        try writeFile(noPID, "IBUS_ADDRESS=unix:path=/tmp/ibus-z\n")
        #expect(InputMethodAddress.liveAddress(in: noPID) == nil)
        let fifo = scratch.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(InputMethodAddress.liveAddress(in: fifo) == nil)
        let link = scratch.path + "/link"
        #expect(symlink(live, link) == 0)
        #expect(InputMethodAddress.liveAddress(in: link) == nil)
    }

    @Test func anExplicitAddressWinsAndAFileIsFoundOrTheReasonSaid() throws {
        #expect(try InputMethodAddress.resolve(environment(["IBUS_ADDRESS": "unix:abstract=x"])).get() == "unix:abstract=x")
        let scratch = try TemporaryDirectory("tether-ibus-resolve")
        let config = scratch.path + "/config"
        let named = scratch.path + "/named"
        try writeFile(named, "IBUS_ADDRESS=unix:path=/tmp/ibus-named\nIBUS_DAEMON_PID=\(getpid())\n")
        let found = InputMethodAddress.resolve(environment(["XDG_CONFIG_HOME": config, "IBUS_ADDRESS_FILE": named]))
        // A machine without a machine-id says so first.
        guard case .success(let address) = found else {
            if case .failure(let notFound) = found { #expect(notFound.reason == "this machine has no machine-id") }
            return
        }
        #expect(address == "unix:path=/tmp/ibus-named")
        guard case .failure(let notFound) = InputMethodAddress.resolve(environment(["XDG_CONFIG_HOME": config])) else {
            Issue.record("an address without any file")
            return
        }
        #expect(notFound.reason == "no ibus-daemon runs for this user (no live address in \(config)/ibus/bus)")
        #expect(throws: InputMethodAddress.NotFound.self) { try InputMethodAddress.resolve(environment([:])).get() }
    }
}
