import Foundation
import Testing
import TetherTestSupport

/// The host under a service manager, with what systemd itself hands a
/// service: a notify socket the test binds (`Type=notify`, `WatchdogSec=`),
/// and systemd's own `systemd-socket-activate` for a socket unit.
@Suite(.timed) struct ServiceManagerTests {
    @Test func theHostPingsTheWatchdogFromItsLoopAndSaysWhenItStops() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("env", script: #"echo "inherited ${WATCHDOG_USEC:-none} ${NOTIFY_SOCKET:-none}"; exec cat"#)
        let notify = try NotifySocket(in: fixture.group.dir.path)
        let host = try fixture.startHost(environment: fixture.group.environment.merging(
            ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "300000"]) { $1 })
        defer { host.signal(SIGKILL) }
        let ready = try notify.expect("READY=1")
        #expect(ready.contains("MAINPID=\(host.pid)") && ready.contains("STATUS=serving \(fixture.group.path): 1 extension(s)"),
                "\(ready)")
        _ = try host.expectLineStarting("[env] inherited none none")
        _ = try notify.expect("WATCHDOG=1", timeout: 2)
        // Stopped, it pings no more: three intervals without one.
        host.signal(SIGSTOP)
        try waitFor("the host to stop", timeout: 5) {
            let stat = (try? String(contentsOfFile: "/proc/\(host.pid)/stat", encoding: .utf8)) ?? ""
            return stat.split(separator: ")").last?.split(separator: " ").first == "T"
        }
        notify.drain()
        #expect(notify.next(timeout: 0.9) == nil, "a stopped host pinged")
        host.signal(SIGCONT)
        _ = try notify.expect("WATCHDOG=1", timeout: 2)
        host.signal(SIGTERM)
        _ = try notify.expect("STOPPING=1")
        #expect(try host.waitForExit() == 0)
    }

    /// A notify socket nobody reads: its queue fills with pings, and the
    /// host's loop goes on answering (the pings are dropped, not waited on).
    @Test func aNotifySocketNobodyReadsNeverStallsTheHost() throws {
        let fixture = try HostFixture()
        let notify = try NotifySocket(in: fixture.group.dir.path)
        let host = try fixture.startHost(environment: fixture.group.environment.merging(
            ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "2000"]) { $1 })
        defer { host.signal(SIGKILL) }
        // A ping a millisecond: the queue (at most 512 datagrams) is full
        // well within the many status calls below.
        for _ in 0..<20 { #expect(try fixture.group.run(["status"], timeout: 10).status == 0) }
        #expect(try host.stop() == 0)
    }

    /// `WATCHDOG_PID` names the process the manager watches: another's, no pings.
    @Test func aWatchdogForAnotherProcessIsNotPinged() throws {
        let fixture = try HostFixture()
        let notify = try NotifySocket(in: fixture.group.dir.path)
        let host = try fixture.startHost(environment: fixture.group.environment.merging(
            ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"]) { $1 })
        defer { host.signal(SIGKILL) }
        _ = try notify.expect("READY=1")
        #expect(notify.next(timeout: 0.6) == nil)
    }

    /// A socket unit listens; the first client starts the host, which
    /// serves that client on the socket it was passed.
    @Test func theFirstClientOfASocketUnitStartsTheHostAndIsAnswered() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("env", script: #"echo "inherited ${LISTEN_FDS:-none} ${LISTEN_PID:-none}"; exec cat"#)
        #expect(mkdir(fixture.group.path, 0o700) == 0)
        let socketPath = fixture.group.path + "/host.sock"
        let manager = try TestProcess("/usr/bin/systemd-socket-activate",
                                      ["-l", socketPath, tetherExecutable, "host", "--group", fixture.group.path,
                                       "--extensions-dir", fixture.extensions, "--grace", "2"],
                                      environment: fixture.group.environment)
        defer { manager.signal(SIGKILL) }
        try manager.waitForError(containing: "Listening on")
        // Nothing holds the lock yet: no host runs.
        #expect(try fixture.group.run(["probe", "host"]).status == 1)
        let status = try fixture.group.run(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try fixture.group.json(status)["pid"] as? Int == Int(manager.pid), "it runs in the manager's child")
        #expect(try fixture.group.run(["probe", "host"]).status == 0)
        _ = try manager.expectLineStarting("[env] inherited none none")
        manager.signal(SIGTERM)
        #expect(try manager.waitForExit() == 0)
        // The manager's socket stays where it listens.
        var info = stat()
        #expect(lstat(socketPath, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK)
    }

    /// An extension started by hand is a first client too: it starts the
    /// host through the socket unit and attaches (a keyboard without open
    /// access too, which attaches before it confines itself).
    @Test(arguments: ["example-widget", "example-keyboard"])
    func anExtensionStartedByHandStartsTheHostThroughItsSocket(_ example: String) throws {
        let group = try TestGroup()
        #expect(mkdir(group.path, 0o700) == 0)
        let manager = try TestProcess("/usr/bin/systemd-socket-activate",
                                      ["-l", group.path + "/host.sock", tetherExecutable, "host", "--group", group.path],
                                      environment: group.environment)
        defer { manager.signal(SIGKILL) }
        try manager.waitForError(containing: "Listening on")
        let byHand = try TestProcess(exampleExecutable(example), ["--group", group.path], environment: group.environment)
        defer { byHand.stopAlways() }
        try byHand.expectLine("attached to host pid \(manager.pid) (started by hand)")
        #expect(try group.run(["probe", "host"]).status == 0)
    }

    /// A socket passed for another path is refused with the fix, not served.
    @Test func aSocketAtAnotherPathIsRefused() throws {
        let fixture = try HostFixture()
        #expect(mkdir(fixture.group.path, 0o700) == 0)
        let elsewhere = fixture.group.dir.path + "/other.sock"
        let manager = try TestProcess("/usr/bin/systemd-socket-activate",
                                      ["-l", elsewhere, tetherExecutable, "host", "--group", fixture.group.path],
                                      environment: fixture.group.environment)
        defer { manager.signal(SIGKILL) }
        try manager.waitForError(containing: "Listening on")
        let client = try RawClient(path: elsewhere)
        defer { client.close() }
        #expect(try manager.waitForExit() == 3)
        #expect(try manager.standardError().contains("none a listening Unix socket at \(fixture.group.path)/host.sock"))
        #expect(try fixture.group.run(["probe", "host"]).status == 1)
    }

    /// Where no user manager answers, each service command says so in one
    /// line, exits 3 and writes nothing.
    @Test func withoutAUserManagerTheServiceCommandsChangeNothing() throws {
        let group = try TestGroup()
        let config = group.dir.path + "/config"
        let environment = group.environment.merging(["XDG_CONFIG_HOME": config, "XDG_RUNTIME_DIR": group.dir.path + "/no-runtime"]) { $1 }
        for arguments in [["service", "install"], ["service", "status"], ["service", "uninstall"]] {
            let result = try tether(arguments, environment: environment)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("no systemd user manager answers") && result.stderr.contains("nothing was changed"),
                    "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: config))
    }

    /// A unit file is lines: a group path with a newline (or any control
    /// character) is refused before anything is made, whatever answers.
    @Test func aPathWithAControlCharacterIsRefusedBeforeAnythingIsWritten() throws {
        let group = try TestGroup()
        let config = group.dir.path + "/config"
        let environment = group.environment.merging(["XDG_CONFIG_HOME": config]) { $1 }
        for bad in ["\(group.dir.path)/new\nline", "\(group.dir.path)/tab\there", "\(group.dir.path)/esc\u{1b}[0m"] {
            let result = try tether(["service", "install", "--group", bad], environment: environment)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("holds a control character") && result.stderr.contains("\\"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: bad), "the group was made")
        }
        let manifest = try tether(["service", "install", "--extension", "\(group.dir.path)/a\rb.extension.json"],
                                  environment: environment)
        #expect(manifest.status == 2, "\(manifest.stderr)")
        #expect(!FileManager.default.fileExists(atPath: config))
    }

    /// `service templates` writes the two templates a package ships, naming
    /// the tether it is told to, and nothing where it cannot.
    @Test func theTemplatesForAPackageNameTheGivenTether() throws {
        let group = try TestGroup()
        let directory = group.dir.path + "/units"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let written = try tether(["service", "templates", "--directory", directory, "--executable", "/usr/bin/tether"])
        #expect(written.status == 0, "\(written.stderr)")
        let service = try String(contentsOfFile: directory + "/tether@.service", encoding: .utf8)
        let socket = try String(contentsOfFile: directory + "/tether@.socket", encoding: .utf8)
        #expect(service.contains("ExecStart=\"/usr/bin/tether\" \"host\" \"--group\" \"%f\""), "\(service)")
        #expect(service.contains("Delegate=memory pids") && socket.contains("ListenStream=%f/host.sock"))
        for name in ["tether@.service", "tether@.socket"] {
            let mode = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o644, "\(name)")
        }
        let missing = try tether(["service", "templates", "--directory", group.dir.path + "/none"])
        #expect(missing.status == 3 && missing.stderr.contains("/none/tether@.socket"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: group.dir.path + "/none"))
        let relative = try tether(["service", "templates", "--directory", directory, "--executable", "bin/tether"])
        #expect(relative.status == 2 && relative.stderr.contains("absolute path"), "\(relative.stderr)")
    }
}
