import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// A group with an extensions directory of shell-script extensions: any
/// executable can be an extension.
struct HostFixture {
    let group: TestGroup
    var extensions: String { group.dir.path + "/extensions" }

    init() throws {
        group = try TestGroup()
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
    }

    /// Writes `NAME.sh` and its manifest.
    func addExtension(_ name: String, role: String = "widget", restart: String = "on-failure", activation: String = "always",
                      script: String) throws {
        let path = "\(extensions)/\(name).sh"
        try writeFile(path, "#!/bin/sh\n\(script)\n", mode: 0o755)
        // Started with the host by default, whatever the role's default.
        let manifest = #"{"name":"\#(name)","role":"\#(role)","executable":"\#(name).sh","restart":"\#(restart)","activation":"\#(activation)"}"#
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(extensions)/\(name).extension.json"))
    }

    /// A shell line that says hello on the launch link, as a shell
    /// extension speaks protocol 1: `extension start`, which waits up to
    /// 10 s for a hello, is answered at once.
    /// `fields`: more of the hello's, as JSON members (`"a":1,"b":2`).
    static func shellHello(_ name: String, role: String = "widget", fields: String? = nil) -> String {
        let more = fields.map { "," + $0 } ?? ""
        return #"printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":{"name":"\#(name)","role":"\#(role)"\#(more)}}' >&"$TETHER_HOST_FD""#
    }

    /// A raw connection to the group's host socket.
    func rawClient() throws -> RawClient { try RawClient(path: group.path + "/host.sock") }

    /// `without`: as on a kernel without those mechanisms (`.namespaces`:
    /// what the host does where extensions get no world of their own).
    func startHost(arguments: [String] = [], environment: [String: String]? = nil,
                   without: [KernelMechanism] = []) throws -> TestProcess {
        // The group's environment first (no session bus: a test host never
        // shows its pushes on the desktop of whoever runs the tests).
        let host = try startTether(group.withGroup(["host", "--extensions-dir", extensions, "--grace", "2"] + arguments),
                                   without: without, environment: group.environment.merging(environment ?? [:]) { $1 })
        // Messages about manifests or instances may come first.
        _ = try host.expectLineStarting("tether host ready: pid \(host.pid)")
        return host
    }

    /// A host with the Swift example notification extension, named
    /// "notify", attached.
    func startHostWithExampleNotification() throws -> TestProcess {
        let manifest = #"{"name":"notify","role":"notification","executable":"\#(exampleExecutable("example-notification"))","activation":"always"}"#
        try writeFile("\(extensions)/notify.extension.json", manifest)
        let host = try startHost()
        _ = try host.expectLineStarting("[notify] attached to host pid \(host.pid)")
        return host
    }

    /// Starts the host, runs `body` with it, and stops it whatever
    /// happened: SIGTERM, its exit awaited (bounded), SIGKILL past that.
    func withHost<T>(arguments: [String] = [], environment: [String: String]? = nil, without: [KernelMechanism] = [],
                     _ body: (TestProcess) throws -> T) throws -> T {
        let host = try startHost(arguments: arguments, environment: environment, without: without)
        defer { host.stopAlways() }
        return try body(host)
    }

    /// `status --json`; one that fails throws, so a test that asks once
    /// fails and a poll (`try?`) that a slow answer does not end asks again.
    func status() throws -> [String: Any] {
        // Its wait scaled as every other (the VM tier's guest is slower).
        let result = try group.run(["status", "--json", "--timeout", String(5 * TestTimeout.scale)])
        guard result.status == 0 else { throw StatusFailed(status: result.status, stderr: result.stderr) }
        return try group.json(result)
    }
}

struct StatusFailed: Error, CustomStringConvertible {
    let status: Int32, stderr: String
    var description: String { "status exited \(status): \(stderr)" }
}

/// "hello from NAME (ROLE) pid N", then wait to be stopped.
let helloScript = #"echo "hello from $TETHER_EXTENSION ($TETHER_ROLE) pid $$"; exec sleep 300"#

/// The pid the host says it started `name` as ("extension 'NAME' started
/// (pid N)"): in a world of its own, the pid it sees itself is 1.
func startedPID(_ name: String, in lines: [String]) -> Int32? {
    let prefix = "extension '\(name)' started (pid "
    return lines.last { $0.hasPrefix(prefix) }.flatMap { Int32($0.dropFirst(prefix.count).prefix { $0 != ")" }) }
}

@Suite(.timed) struct HostCommandTests {
    @Test func hostRunsExtensionsServesFeaturesAndStopsCleanly() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("hello", script: helloScript)
        try Data(#"{"name":"broken","role":"watch","executable":"hello.sh"}"#.utf8)
            .write(to: URL(fileURLWithPath: fixture.extensions + "/broken.extension.json"))
        let host = try fixture.startHost()
        // After "extension 'hello' started (pid N)".
        let lines = try host.expectLineStarting("[hello] hello from hello")
        #expect(lines.last?.hasPrefix("[hello] hello from hello (widget) pid ") == true)
        let extensionPID = try #require(startedPID("hello", in: lines))

        let status = try fixture.status()
        #expect(status["pid"] as? Int == Int(host.pid))
        let extensions = try #require(status["extensions"] as? [[String: Any]])
        #expect(extensions.count == 1)
        #expect(extensions.first?["state"] as? String == "running")
        #expect(extensions.first?["pid"] as? Int == Int(extensionPID))

        let second = try fixture.group.run(["host"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(host.pid))"))

        #expect(try fixture.group.run(["feature", "start", "recording"]).status == 0)
        let probe = try fixture.group.run(["probe", "feature", "recording", "--json"])
        #expect(probe.status == 0)
        #expect(try fixture.group.json(probe)["pid"] as? Int == Int(host.pid))
        let list = try fixture.group.json(try fixture.group.run(["feature", "list", "--json"]))
        #expect((list["features"] as? [[String: Any]])?.first?["name"] as? String == "recording")
        #expect(try fixture.group.run(["feature", "stop", "recording"]).status == 0)
        #expect(try fixture.group.run(["probe", "feature", "recording"]).status == 1)
        #expect(try fixture.group.run(["feature", "start", "recording"]).status == 0)

        host.signal(SIGTERM)
        #expect(try host.waitForExit() == 0)
        #expect(!processAlive(extensionPID), "the extension was stopped with the host")
        #expect(try fixture.group.run(["probe", "host"]).status == 1)
        #expect(try fixture.group.run(["probe", "feature", "recording"]).status == 1, "features end with the host")
        #expect(!FileManager.default.fileExists(atPath: fixture.group.path + "/host.sock"))
        let errors = try host.standardError()
        #expect(errors.contains("broken.extension.json: \"role\" 'watch' is not a role"), "\(errors)")
    }

    @Test func crashLoopMarksTheExtensionFailedAndTheHostStaysUp() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("crashy", script: "exit 3")
        try fixture.withHost { host in
            // Backoff 100 + 200 + 400 + 800 ms; the fifth quick failure gives up.
            let restarts = try host.expectLineStarting("extension 'crashy' exited with status 3; restarting in 800 ms")
            #expect(restarts.filter { $0.contains("exited with status 3") }.count == 4, "\(restarts)")
            try host.waitForError(containing: "extension 'crashy' failed: exited with status 3 5 times in a row")
            let extensions = try #require(try fixture.status()["extensions"] as? [[String: Any]])
            #expect(extensions.first?["state"] as? String == "failed")
            #expect(extensions.first?["restarts"] as? Int == 4)
            host.signal(SIGTERM)
            #expect(try host.waitForExit() == 0)
        }
    }

    @Test func withoutAHostTheClientCommandsSaySo() throws {
        let group = try TestGroup()
        for arguments in [["status"], ["feature", "start", "rec"], ["feature", "stop", "rec"], ["feature", "list"], ["push", "{}"]] {
            let result = try group.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains("host is not running"), "\(arguments): \(result.stderr)")
        }
    }

    /// kill -9 the host: it reads "not running" at once, and its children
    /// end within a second.
    @Test func killNineOfTheHostReadsNotRunningAtOnceAndItsChildrenEnd() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("alive", script: helloScript)
        let host = try fixture.startHost()
        let lines = try host.expectLineStarting("", containing: "hello from alive")
        let child = try #require(startedPID("alive", in: lines))
        defer { kill(child, SIGKILL) }

        host.signal(SIGKILL)
        #expect(try host.waitForExit() == 128 + SIGKILL)
        #expect(try fixture.group.run(["probe", "host"]).status == 1)
        #expect(try fixture.group.run(["status"]).status == 1)
        try waitUntilGone([child], within: 1)
    }

    /// Replies to a peer that already hung up fail with EPIPE; they must not
    /// raise SIGPIPE and kill the host.
    @Test func aPeerThatHangsUpMidReplyDoesNotKillTheHost() throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            for _ in 0..<20 {
                let client = try fixture.rawClient()
                let ping = Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.status)"}"#.utf8) + [0x0a]
                client.send(Array([[UInt8]](repeating: ping, count: 2_000).joined()))
                client.close()
            }
            #expect(try fixture.status()["pid"] as? Int == Int(host.pid))
        }
    }

    /// The host ignores SIGPIPE; its extensions must start with the default.
    @Test func extensionsStartWithSIGPIPEAtItsDefault() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("signals", script: #"grep SigIgn /proc/$$/status; exec sleep 300"#)
        try fixture.withHost { host in
            let line = try #require(try host.expectLineStarting("[signals] SigIgn:").last)
            let mask = try #require(UInt64(line.split(separator: "\t").last ?? "", radix: 16))
            #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) == 0, "\(line)")
        }
    }

    @Test func groupPathTooLongForASocketIsAClearError() throws {
        let dir = try TemporaryDirectory("tether-cli")
        let group = dir.path + "/" + String(repeating: "g", count: 100)
        let result = try tether(["host", "--group", group])
        #expect(result.status == 3)
        #expect(result.stderr.contains("too long for a Unix socket"), "\(result.stderr)")
        #expect(try tether(["probe", "host", "--group", group]).status == 1, "the host lock was let go")
    }

    /// A directory where the socket goes (planted, or left by a tool) is
    /// named for what it is, not "address already in use"; nothing is held.
    @Test func aDirectoryWhereTheSocketGoesIsAClearError() throws {
        let fixture = try HostFixture()
        try FileManager.default.createDirectory(atPath: fixture.group.path + "/host.sock", withIntermediateDirectories: true)
        let result = try tether(["host", "--group", fixture.group.path, "--extensions-dir", fixture.extensions])
        #expect(result.status == 3)
        #expect(result.stderr.contains("/host.sock: a directory is there, not a host's socket; remove it"), "\(result.stderr)")
        #expect(try tether(["probe", "host", "--group", fixture.group.path]).status == 1, "the host lock was let go")
    }

    /// A file where the socket goes is not the host's to remove (it
    /// unlinked whatever was there): it stays, and the error says so.
    @Test func aFileWhereTheSocketGoesIsLeftAndNamed() throws {
        let fixture = try HostFixture()
        try FileManager.default.createDirectory(atPath: fixture.group.path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let planted = fixture.group.path + "/host.sock"
        try "precious\n".write(toFile: planted, atomically: false, encoding: .utf8)
        let result = try tether(["host", "--group", fixture.group.path, "--extensions-dir", fixture.extensions], timeout: 10)
        #expect(result.status == 3)
        #expect(result.stderr.contains("/host.sock: a file is there, not a host's socket; move it away"), "\(result.stderr)")
        #expect((try? String(contentsOfFile: planted, encoding: .utf8)) == "precious\n")
    }

    @Test func readinessIsSentToNotifySocket() throws {
        let fixture = try HostFixture()
        let notify = try NotifySocket(in: fixture.group.dir.path)
        try fixture.withHost(environment: ["NOTIFY_SOCKET": notify.path]) { host in
            #expect(notify.next(timeout: 10)?.hasPrefix("READY=1") == true)
        }
    }
}
