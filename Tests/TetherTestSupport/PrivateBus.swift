import Foundation
import TetherLoop

/// A D-Bus session bus of the test's own (`dbus-daemon` with its own
/// configuration) in `directory`, with no service directories: nothing is
/// started on demand (the system's keyring with the user's real HOME, a
/// notification daemon, a prompter). For the keyring's and the desktop's
/// fixtures.
package final class PrivateBus: @unchecked Sendable {
    /// Without the bus's guid: a bus started again at the path has the
    /// same address, as a login session's (`unix:path=/run/user/UID/bus`).
    package let address: String
    package let socketPath: String
    private let configuration: String
    private var daemon: TestProcess?

    package init(in directory: String) throws {
        socketPath = directory + "/bus"
        address = "unix:path=" + socketPath
        configuration = directory + "/bus.conf"
        try writeFile(configuration, """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socketPath)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """)
        try start()
    }

    /// Starts the daemon; returns once it listens.
    package func start() throws {
        let daemon = try TestProcess("dbus-daemon", ["--config-file=\(configuration)", "--nofork", "--nopidfile", "--print-address=1"])
        guard try daemon.readLine(timeout: 20)?.isEmpty == false else { throw SpawnFailed(description: "dbus-daemon printed no address") }
        self.daemon = daemon
    }

    /// Stops the daemon (SIGSTOP) or lets it go on (SIGCONT): a bus that
    /// takes its clients' messages into its socket and reads none.
    package func pause(_ paused: Bool = true) {
        daemon?.signal(paused ? SIGSTOP : SIGCONT)
    }

    /// Returns once `name` has an owner on this bus (`gdbus wait` watches
    /// the bus for it, bounded), `owner` saying who was awaited if not.
    package func waitForName(_ name: String, owner: String) throws {
        let ready = try runCommand("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=\(address)", "gdbus", "wait", "--session",
                                                   "--timeout", "20", name], timeout: 30)
        guard ready.status == 0 else { throw TestTimeout(what: "\(owner) to own \(name): \(ready.stderr)") }
    }

    /// Ends the daemon whatever happened (the fixture's end).
    package func stopAlways() {
        daemon?.stopAlways()
        daemon = nil
    }

    /// Ends the daemon, as a logout does, and removes its socket.
    package func stop() throws {
        guard let daemon else { return }
        daemon.signal(SIGTERM)
        _ = try daemon.waitForExit(timeout: 20)
        self.daemon = nil
        unlink(socketPath)
    }
}
