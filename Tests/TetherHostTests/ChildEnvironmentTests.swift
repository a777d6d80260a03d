import Testing
@testable import TetherHost

/// What a launched extension is told: where things are and how to speak,
/// and Tether's own variables; never the user's tokens nor a session
/// service's address.
@Suite struct ChildEnvironmentTests {
    static let host: [String: String] = [
        // Passed.
        "PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "de_DE.UTF-8", "LC_TIME": "en_GB.UTF-8", "TZ": "Europe/Berlin",
        "XDG_CONFIG_HOME": "/home/u/.config", "https_proxy": "http://proxy:3128", "NO_PROXY": "localhost",
        "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        // The user's secrets, for their own tools.
        "GH_TOKEN": "ghp_secret", "AWS_SECRET_ACCESS_KEY": "aws-secret", "AWS_ACCESS_KEY_ID": "AKIA", "OPENAI_API_KEY": "sk-secret",
        "VAULT_TOKEN": "hvs.secret", "NPM_TOKEN": "npm-secret", "PGPASSWORD": "pg-secret",
        // Doors out of a confined extension's world.
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "SSH_AUTH_SOCK": "/tmp/ssh/agent", "DISPLAY": ":0",
        "WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": "/run/user/0", "IBUS_ADDRESS": "unix:path=/x",
        "IBUS_ADDRESS_FILE": "/home/u/.config/ibus/bus/x", "NOTIFY_SOCKET": "/run/systemd/notify",
        // The service manager's, for the host alone.
        "LISTEN_PID": "7", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "tether", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "7",
        // Each launch gets its own; the host's own settings and a forged group stay out.
        "TMPDIR": "/tmp/host", "TETHER_GROUP": "/forged", "TETHER_LOG_LEVEL": "debug", "TETHER_OPEN_ACCESS": "1",
        // What a program loads before its own code: never from the host's caller.
        "LD_PRELOAD": "/tmp/evil.so", "LD_LIBRARY_PATH": "/tmp/evil", "PYTHONPATH": "/tmp/evil",
    ]

    @Test func onlyWhereThingsAreAndHowToSpeakPass() {
        let told = ChildEnvironment.make(from: Self.host, group: "/home/u/.local/share/tether/g", hostPID: 42)
        #expect(told == [
            "HOME=/home/u", "LANG=de_DE.UTF-8", "LC_TIME=en_GB.UTF-8", "NO_PROXY=localhost", "PATH=/usr/bin:/bin",
            "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "TETHER_GROUP=/home/u/.local/share/tether/g",
            "TETHER_HOST_FD=3", "TETHER_HOST_PID=42", "TZ=Europe/Berlin", "XDG_CONFIG_HOME=/home/u/.config",
            "https_proxy=http://proxy:3128",
        ])
        #expect(!told.joined().contains("secret"))
    }

    /// Names differ in case only where tools read both spellings (proxies);
    /// a look-alike of an inherited name is not inherited.
    @Test func lookAlikesDoNotPass() {
        let told = ChildEnvironment.make(from: ["PATH_SECRET": "x", "path": "x", "HOME ": "x", "LC": "x", "XLC_ALL": "x"],
                                         group: "/g", hostPID: 1)
        #expect(told == ["TETHER_GROUP=/g", "TETHER_HOST_FD=3", "TETHER_HOST_PID=1"])
    }
}
