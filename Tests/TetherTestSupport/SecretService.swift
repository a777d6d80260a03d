import Foundation
import TetherLoop

/// A Secret Service of the test's own: a D-Bus session bus (`dbus-daemon`)
/// and GNOME Keyring on it, its keyrings in the test's directory, its login
/// collection created and unlocked with a password the test gives. Tether
/// processes reach it through `environment`. Stopped with the fixture.
package final class SecretService: @unchecked Sendable {
    package let directory: TemporaryDirectory
    /// The session bus's address.
    package let address: String
    /// What a process needs to use this keyring.
    package var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }
    private let bus: PrivateBus
    private var keyring: TestProcess?
    private var prompter: TestProcess?
    private let home: String, runtime: String
    static let collection = "/org/freedesktop/secrets/collection/login"

    package init() throws {
        for tool in ["dbus-daemon", "gnome-keyring-daemon", "secret-tool", "dbus-send", "gdbus"]
        where ExecutableSearch.onPath(tool) == nil {
            throw SpawnFailed(description: "\(tool) is missing: run .ci/ensure-system-libraries --tests")
        }
        directory = try TemporaryDirectory("tether-keyring")
        bus = try PrivateBus(in: directory.path)
        address = bus.address
        home = directory.path + "/home"
        runtime = directory.path + "/run"
        for made in [home, runtime] { try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true) }
        try startKeyring()
    }

    /// Ends the session bus (and the keyring with it), then starts both
    /// again at the same address, as logging out and in again does.
    package func restartBus() throws {
        try stopKeyring()
        try bus.stop()
        try bus.start()
        try startKeyring()
    }

    /// Starts GNOME Keyring, which creates or unlocks the login collection
    /// with the test's password; returns once it owns the service's name.
    package func startKeyring() throws {
        // Its keyrings live in the test's directory, not the user's.
        let keyring = try TestProcess("gnome-keyring-daemon", ["--foreground", "--unlock", "--components=secrets"],
                                      environment: ["DBUS_SESSION_BUS_ADDRESS": address, "HOME": home, "XDG_RUNTIME_DIR": runtime,
                                                    "XDG_DATA_HOME": home + "/.local/share", "DISPLAY": ""])
        keyring.writeStdin("test-keyring-password")
        keyring.closeStdin()
        self.keyring = keyring
        // Ready once it owns the Secret Service's name.
        try bus.waitForName("org.freedesktop.secrets", owner: "gnome-keyring-daemon")
    }

    /// Ends GNOME Keyring: the Secret Service vanishes from the bus (its
    /// items stay on disk, for `startKeyring`).
    package func stopKeyring() throws {
        guard let keyring else { return }
        keyring.signal(SIGTERM)
        _ = try keyring.waitForExit(timeout: 20)
        self.keyring = nil
    }

    /// Stops GNOME Keyring (SIGSTOP) or lets it go on (SIGCONT): a daemon
    /// that takes calls and never answers them, then answers again.
    package func pauseKeyring(_ paused: Bool = true) {
        keyring?.signal(paused ? SIGSTOP : SIGCONT)
    }

    /// A system prompter (what shows GNOME Keyring's unlock dialog) that
    /// takes every prompt and never answers, as a dialog nobody is at the
    /// screen for: a call that needs the collection unlocked waits on it.
    package func promptNobodyAnswers() throws {
        prompter = try TestProcess(try PythonEnvironment.python(), ["-c", """
            import sys
            from jeepney import MessageType, new_method_return
            from jeepney.bus_messages import message_bus
            from jeepney.io.blocking import open_dbus_connection
            bus = open_dbus_connection(bus=sys.argv[1])
            bus.send_and_get_reply(message_bus.RequestName("org.gnome.keyring.SystemPrompter", 4))
            print("prompter ready", flush=True)
            while True:
                message = bus.receive()
                if message.header.message_type == MessageType.method_call:
                    bus.send(new_method_return(message))  # and never calls back
            """, address])
        _ = try prompter?.expectLine("prompter ready", timeout: 60)
    }

    /// Locks the login collection, as a screen lock or `Lock` from another client does.
    package func lock() throws {
        let result = try dbus(["org.freedesktop.Secret.Service.Lock", "array:objpath:\(Self.collection)"])
        guard result.status == 0 else { throw SpawnFailed(description: "cannot lock the keyring: \(result.stderr)") }
    }

    /// The bus socket's path.
    package var socketPath: String { bus.socketPath }

    /// `secret-tool store`: `secret` under these attributes.
    package func store(_ secret: String, _ attributes: [String: String]) throws {
        let store = try TestProcess("secret-tool", ["store", "--label=test"] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] },
                                    environment: environment)
        store.writeStdin(secret)
        store.closeStdin()
        guard try store.waitForExit(timeout: 20) == 0 else { throw SpawnFailed(description: "secret-tool store failed") }
    }

    /// `secret-tool lookup` with these attributes: the secret, or nil when none matches.
    package func lookup(_ attributes: [String: String]) throws -> String? {
        let result = try runCommand("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=\(address)", "secret-tool", "lookup"]
                                    + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] })
        return result.status == 0 ? result.stdout : nil
    }

    /// Every item's attributes, as `secret-tool search --all` prints them.
    package func search(_ attributes: [String: String]) throws -> String {
        let result = try runCommand("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=\(address)", "secret-tool", "search", "--all", "--unlock"]
                                    + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] })
        return result.stdout + result.stderr
    }

    private func dbus(_ call: [String], to destination: String = "org.freedesktop.secrets",
                      path: String = "/org/freedesktop/secrets") throws -> CommandResult {
        try runCommand("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=\(address)", "dbus-send", "--session", "--print-reply",
                                        "--dest=\(destination)", path] + call)
    }
}
