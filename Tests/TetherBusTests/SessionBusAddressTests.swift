#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import TetherBus
import TetherTestSupport

/// The session bus is found, never started: an autolaunch anywhere in the
/// address list, a path where no bus listens, or no address at all is no
/// bus, each with why (what `status` says); no process, no connection.
@Suite struct SessionBusAddressTests {
    static func resolve(_ environment: [String: String]) -> Result<String, SessionBusAddress.NoBus> {
        SessionBusAddress.resolve { environment[$0] }
    }

    static func reason(_ environment: [String: String]) -> String? {
        guard case .failure(let noBus) = resolve(environment) else { return nil }
        return noBus.reason
    }

    /// A Unix socket bound at `path`, as a bus daemon's is; its descriptor.
    static func listening(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        try #require(withUnixAddress(path) { bind(fd, $0, $1) } == 0)
        return fd
    }

    @Test func anAutolaunchAnywhereInTheListIsNoBus() {
        let refusal = "DBUS_SESSION_BUS_ADDRESS asks for autolaunch, which Tether never does"
        #expect(Self.reason(["DBUS_SESSION_BUS_ADDRESS": "autolaunch:"]) == refusal)
        #expect(Self.reason(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/tether-tests;autolaunch:", "DISPLAY": ":99"])
            == refusal)
        #expect(Self.reason(["DBUS_SESSION_BUS_ADDRESS": "unix:abstract=x;autolaunch:scope=*user"]) == refusal)
    }

    @Test func aPathWhereNoBusListensAndNoAddressAtAllAreNoBus() throws {
        let scratch = try TemporaryDirectory("tether-bus-address")
        #expect(Self.reason(["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(scratch.path)/bus"])
            == "no bus listens at \(scratch.path)/bus")
        #expect(Self.reason([:]) == "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set")
        #expect(Self.reason(["XDG_RUNTIME_DIR": "relative"]) == "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set")
        #expect(Self.reason(["XDG_RUNTIME_DIR": scratch.path])
            == "DBUS_SESSION_BUS_ADDRESS is not set and \(scratch.path)/bus is no socket")
    }

    /// A listening socket is a bus: the address as given, or systemd's user
    /// bus under XDG_RUNTIME_DIR with its path escaped.
    @Test func aSocketIsABus() throws {
        let scratch = try TemporaryDirectory("tether-bus-address")
        let runtime = scratch.path + "/run time"
        try #require(mkdir(runtime, 0o700) == 0)
        let fd = try Self.listening(at: runtime + "/bus")
        defer { close(fd) }
        #expect(try Self.resolve(["XDG_RUNTIME_DIR": runtime]).get() == "unix:path=" + SessionBusAddress.escaped(runtime + "/bus"))
        #expect(SessionBusAddress.escaped(runtime).hasSuffix("/run%20time"))
        #expect(try Self.resolve(["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/bus", "XDG_RUNTIME_DIR": "/nonexistent"]).get()
            == "unix:path=\(runtime)/bus")
        // Not a path: handed to the client as it is.
        #expect(try Self.resolve(["DBUS_SESSION_BUS_ADDRESS": "unix:abstract=tether-test"]).get() == "unix:abstract=tether-test")
    }
}
