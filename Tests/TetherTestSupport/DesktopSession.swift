import Foundation
import TetherLoop

/// A desktop session of the test's own: a session bus (`dbus-daemon` with
/// its own configuration), an X display (`Xvfb -displayfd`, its cookie in
/// an Xauthority file of the test's) and dunst on both, with a dunstrc of
/// the test's. HOME, XDG_CONFIG_HOME and XDG_RUNTIME_DIR are in the
/// test's directory. `dunstctl` tells what dunst showed.
package final class DesktopSession: @unchecked Sendable {
    package let directory: TemporaryDirectory
    package let address: String
    package let display: String
    private let bus: PrivateBus
    private let screen: PrivateDisplay
    private var dunst: TestProcess?
    private let home: String, runtime: String, xauthority: String, dunstrc: String

    /// What a process needs to be in this session: its bus, and nothing of
    /// the runner's desktop.
    package var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address, "DISPLAY": display, "XAUTHORITY": xauthority, "HOME": home,
         "XDG_CONFIG_HOME": home + "/.config", "XDG_RUNTIME_DIR": runtime]
    }

    /// `markup`: dunst's own setting, which its capabilities follow
    /// (`full`, as Debian's dunstrc has it, announces body markup; `no` does not).
    package init(markup: String = "full") throws {
        for tool in ["dbus-daemon", "gdbus", "Xvfb", "xauth", "dunst", "dunstctl"] where ExecutableSearch.onPath(tool) == nil {
            throw SpawnFailed(description: "\(tool) is missing: run .ci/ensure-system-libraries --tests")
        }
        directory = try TemporaryDirectory("tether-desktop")
        home = directory.path + "/home"
        runtime = directory.path + "/run"
        dunstrc = directory.path + "/dunstrc"
        for made in [home + "/.config", runtime] {
            try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        bus = try PrivateBus(in: directory.path)
        address = bus.address
        screen = try PrivateDisplay(in: directory.path)
        display = screen.display
        xauthority = screen.xauthority
        // No idle rule (Xvfb has no user to be idle), so expiries run;
        // its defaults otherwise.
        try writeFile(dunstrc, "[global]\n    idle_threshold = 0\n    history_length = 100\n    markup = \(markup)\n")
        try startDunst()
    }

    /// Ends the session bus (dunst first), as a logout does.
    package func stopBus() throws {
        try stopDunst()
        try bus.stop()
    }

    /// The session bus again at the same address, and dunst on it, as a new login.
    package func startBus() throws {
        try bus.start()
        try startDunst()
    }

    /// Starts dunst; returns once it owns org.freedesktop.Notifications.
    package func startDunst() throws {
        dunst = try TestProcess("dunst", ["-config", dunstrc], environment: environment)
        try bus.waitForName("org.freedesktop.Notifications", owner: "dunst")
    }

    /// Ends dunst: the name leaves the bus.
    package func stopDunst() throws {
        guard let dunst else { return }
        dunst.signal(SIGTERM)
        _ = try dunst.waitForExit(timeout: 20)
        self.dunst = nil
    }

    /// Stops dunst (SIGSTOP) or lets it go on (SIGCONT): a server that takes
    /// calls and does not answer them, then answers again.
    package func pauseDunst(_ paused: Bool = true) {
        dunst?.signal(paused ? SIGSTOP : SIGCONT)
    }

    /// Stops the session bus itself (SIGSTOP) or lets it go on (SIGCONT).
    package func pauseBus(_ paused: Bool = true) {
        bus.pause(paused)
    }

    /// `dunstctl ARGS` (or another tool) in this session.
    @discardableResult
    package func command(_ tool: String, _ arguments: [String], timeout: Double = 30) throws -> CommandResult {
        try runCommand("/usr/bin/env", environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [tool] + arguments,
                       timeout: timeout)
    }

    /// Invokes the default action of the notification at `position` (0: the newest shown).
    package func invokeAction(_ position: Int = 0) throws {
        let result = try command("dunstctl", ["action", String(position)])
        guard result.status == 0 else { throw SpawnFailed(description: "dunstctl action failed: \(result.stderr)") }
    }

    /// Closes `id` as any client may: `CloseNotification` (reason 3).
    package func closeNotification(_ id: Int) throws {
        let result = try command("gdbus", ["call", "--session", "--dest", "org.freedesktop.Notifications",
                                           "--object-path", "/org/freedesktop/Notifications",
                                           "--method", "org.freedesktop.Notifications.CloseNotification", String(id)])
        guard result.status == 0 else { throw SpawnFailed(description: "CloseNotification failed: \(result.stderr)") }
    }

    /// Another client's signal, as if the server sent it: `ActionInvoked(id,
    /// key)` from a connection that does not own org.freedesktop.Notifications.
    package func forgeActionInvoked(_ id: Int, key: String) throws {
        let result = try command("gdbus", ["emit", "--session", "--object-path", "/org/freedesktop/Notifications",
                                           "--signal", "org.freedesktop.Notifications.ActionInvoked", "uint32 \(id)", "'\(key)'"])
        guard result.status == 0 else { throw SpawnFailed(description: "gdbus emit failed: \(result.stderr)") }
    }

    /// Closes every notification shown: they go to the history.
    package func closeAll() throws {
        try command("dunstctl", ["close-all"])
    }

    /// What dunst showed and has closed, newest first: each one's fields
    /// as `dunstctl history` gives them (summary, body, id, appname, urgency,
    /// category, …), as strings or numbers.
    package func history() throws -> [[String: Any]] {
        let result = try command("dunstctl", ["history"])
        guard result.status == 0,
              let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let data = object["data"] as? [[Any]] else {
            throw SpawnFailed(description: "dunstctl history: \(result.stdout) \(result.stderr)")
        }
        return (data.first ?? []).compactMap { entry in
            (entry as? [String: Any])?.compactMapValues { ($0 as? [String: Any])?["data"] }
        }
    }

    /// How many notifications dunst shows now.
    package func displayed() throws -> Int {
        let result = try command("dunstctl", ["count", "displayed"])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    deinit {
        dunst?.stopAlways()
        screen.stopAlways()
        bus.stopAlways()
    }
}
