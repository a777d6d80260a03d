import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

/// The host builds each kind of launch's Landlock rules ahead (a spare, with
/// its own temporary directory, renamed for the launch that takes it). A
/// spare is used only while it is what a build now would give.
///
/// A suite apart from `SandboxTests`: whether a spare is still what a build
/// would give is the host's logic, the same on every kernel with Landlock,
/// so the VM tier (which proves what an older kernel enforces) leaves it out.
@Suite(.timed, .enabled(if: KernelSupport.current.landlockABI != nil && KernelSupport.current.seccomp,
                        "needs Landlock (Linux 5.13+) and seccomp"))
struct SpareRulesetTests {
    /// Reads the file it is given, writes to its TMPDIR, and says so.
    static let spareReader = #"""
        import errno, json, os, sys
        def attempt(f):
            try:
                f(); return "ok"
            except OSError as error:
                return errno.errorcode.get(error.errno, str(error.errno))
        def write():
            with open(os.path.join(os.environ["TMPDIR"], "x"), "w") as fh: fh.write("x")
        found = ",".join(sorted(os.listdir(os.environ["TMPDIR"])))
        print("RESULT " + json.dumps({"read": attempt(lambda: open(sys.argv[1]).read()), "write": attempt(write),
                                      "tmpdir": os.path.basename(os.environ["TMPDIR"]), "found": found}), flush=True)
        """#

    /// Two on-demand extensions of one kind, each running `spareReader` on `path`.
    static func addSpareReaders(_ fixture: HostFixture, role: String, reading path: String) throws {
        try writeFile("\(fixture.extensions)/reader.py", spareReader)
        for name in ["first", "second"] {
            let manifest: [String: Any] = [
                "name": name, "role": role, "executable": "/usr/bin/env",
                "arguments": ["python3", "\(fixture.extensions)/reader.py", path],
                "activation": "on-demand", "restart": "never",
            ]
            try JSONSerialization.data(withJSONObject: manifest)
                .write(to: URL(fileURLWithPath: "\(fixture.extensions)/\(name).extension.json"))
        }
    }

    /// Widget readers whose host gets a `TMPDIR` base of the test's own:
    /// the fixture, that base, and the host's `BASE/tether-UID` in it.
    static func spareFixtureWithOwnTemporaryBase() throws -> (HostFixture, base: String, root: String) {
        let fixture = try HostFixture()
        let base = fixture.group.dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        try addSpareReaders(fixture, role: "widget", reading: "/etc/hostname")
        return (fixture, base, base + "/tether-\(geteuid())")
    }

    /// Starts `name` and returns what it said.
    static func spareResult(_ fixture: HostFixture, _ host: TestProcess, _ name: String,
                            environment: [String: String]? = nil) throws -> [String: String] {
        let started = try tether(fixture.group.withGroup(["extension", "start", name]),
                                 environment: environment ?? fixture.group.environment)
        #expect(started.status == 0, "\(started.stderr)")
        let line = try host.expectLineStarting("[\(name)] RESULT ", timeout: 30).last ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst("[\(name)] RESULT ".count).utf8))
            as? [String: String])
    }

    /// A file made in `/tmp` (whose entries are granted one by one) after
    /// the next launch's rules were built is readable by that launch: the
    /// rules are built again. (They were used as built: the file unreadable.)
    @Test func rulesBuiltAheadAreNotUsedOnceADirectoryTheyListChanged() throws {
        let fixture = try HostFixture()
        let path = "/tmp/tether-spare-test-\(UUID().uuidString)"
        defer { unlink(path) }
        try Self.addSpareReaders(fixture, role: "widget", reading: path)
        try fixture.withHost(without: [.namespaces]) { host in
            // Its answer comes after the spare for the next one was built.
            #expect(try Self.spareResult(fixture, host, "first")["read"] == "ENOENT")
            var before = stat()
            #expect(stat("/tmp", &before) == 0)
            try writeFile(path, "made after the rules", mode: 0o644)
            // A change within the clock's tick leaves the time as it was
            // (and so the rules); make one the next tick shows.
            let scratch = path + ".tick"
            let deadline = TestTimeout.deadline(after: 5)
            var after = stat()
            while stat("/tmp", &after) == 0, after.st_mtim.tv_sec == before.st_mtim.tv_sec,
                  after.st_mtim.tv_nsec == before.st_mtim.tv_nsec, Date() < deadline {
                close(open(scratch, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600))
                unlink(scratch)
            }
            let second = try Self.spareResult(fixture, host, "second")
            #expect(second["read"] == "ok", "\(second)")
            #expect(second["write"] == "ok", "\(second)")
            #expect(second["tmpdir"]?.hasPrefix("second.") == true, "\(second)")
        }
    }

    /// Another group's secrets that appear after the next launch's rules
    /// were built stay hidden from that launch (a read-only keyboard): the
    /// policy changed, so the rules are built again. (They were used as
    /// built: the other group's directory was granted whole.)
    @Test func rulesBuiltAheadAreNotUsedOnceAnotherGroupsSecretsAppear() throws {
        let fixture = try HostFixture()
        let other = try TestGroup()
        let environment = fixture.group.environment.merging(["XDG_STATE_HOME": fixture.group.dir.path + "/state"]) { $1 }
        try fixture.group.makeSecrets()
        try writeFile(fixture.group.credentialsPath, #"{"refresh":"SECRET"}"#, mode: 0o600)
        #expect(try tether(fixture.group.withGroup(["token", "status"]), environment: environment).status == 0)
        try Self.addSpareReaders(fixture, role: "keyboard", reading: other.credentialsPath)
        try fixture.withHost(environment: environment, without: [.namespaces]) { host in
            #expect(try Self.spareResult(fixture, host, "first", environment: environment)["read"] == "ENOENT")
            // What a login of the other group does first: its store opened,
            // its secrets listed in the user's index.
            try other.makeSecrets()
            try writeFile(other.credentialsPath, #"{"refresh":"OTHER-SECRET"}"#, mode: 0o600)
            #expect(try tether(other.withGroup(["token", "status"]), environment: environment).status == 0)
            let second = try Self.spareResult(fixture, host, "second", environment: environment)
            #expect(second["read"] == "EACCES", "\(second)")
            #expect(second["tmpdir"]?.hasPrefix("second.") == true, "\(second)")
        }
    }

    /// Rules built ahead while descriptors had run out hide nothing (every
    /// directory granted whole): they are never kept or used, even once
    /// descriptors are back; a launch builds its own, which hide the secrets.
    /// (Used, a read-only keyboard read every group's secrets.)
    @Test func rulesThatCouldNotHideWhatThePolicyHidesAreNeverUsed() throws {
        let output = try Self.shortageFixture("spare-without-descriptors", descriptorLimit: 64)
        #expect(output == "prepared false used false secretsHidden true\n")
    }

    /// Rules made while descriptors ran out are no rules to run with: the
    /// confinement says it is short (a launch is tried again later; an
    /// extension started by hand stops), where it used to grant "/" whole
    /// and go on with a warning, every group's secrets readable.
    @Test func rulesMadeWithoutDescriptorsAreAShortageNotAMissingProtection() throws {
        let output = try Self.shortageFixture("confine-without-descriptors", descriptorLimit: 64)
        #expect(output == "shortage true secretsHidden false\n")
    }

    /// A listing run short lets go of what is kept and reads the directory
    /// again from its start: the rules still grant what they should. (The
    /// second pass read on from the end, granted nothing under "/" or
    /// "/tmp", and was kept: every later launch failed with EACCES until a
    /// restart.)
    @Test func aListingRetriedAfterAShortageGrantsEverything() throws {
        // An entry of /tmp's own, readable to a keyboard.
        let probe = "/tmp/tether-probe.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try Data("probe".utf8).write(to: URL(fileURLWithPath: probe))
        defer { unlink(probe) }
        let output = try Self.shortageFixture("grants-after-shortage", descriptorLimit: 256, probe)
        #expect(output == "shortage false etcReadable true probeReadable true\n")
    }

    /// `SDKFixture MODE GROUP ARGUMENTS` under `ulimit -n`, for a group
    /// with its secrets: what it printed (it must exit 0).
    static func shortageFixture(_ mode: String, descriptorLimit: Int, _ arguments: String...) throws -> String {
        let group = try TestGroup()
        try FileManager.default.createDirectory(atPath: group.path, withIntermediateDirectories: true)
        try group.makeSecrets()
        let fixture = try runCommand("/bin/sh", ["-c", "ulimit -n \(descriptorLimit) && exec \"$@\"", "sh",
                                                 exampleExecutable("SDKFixture"), mode, group.path] + arguments)
        #expect(fixture.status == 0, "\(fixture.stderr)")
        return fixture.stdout
    }

    /// What waited beside the launches in a spare's directory (a file a
    /// process of the user's put there) is no launch's: the directory goes
    /// and the launch gets a fresh one. (It was handed over as it was.)
    @Test func aSparesDirectoryThatIsNoLongerEmptyIsNotHandedOver() throws {
        let (fixture, base, root) = try Self.spareFixtureWithOwnTemporaryBase()
        try fixture.withHost(environment: ["TMPDIR": base], without: [.namespaces]) { host in
            #expect(try Self.spareResult(fixture, host, "first")["found"] == "")
            let parent = try #require((try FileManager.default.contentsOfDirectory(atPath: root)).first { $0.count == 16 })
            let spare = try #require((try FileManager.default.contentsOfDirectory(atPath: root + "/" + parent))
                .first { $0.hasPrefix(".spare.") })
            try writeFile(root + "/" + parent + "/" + spare + "/planted", "x", mode: 0o600)
            let second = try Self.spareResult(fixture, host, "second")
            #expect(second["found"] == "", "\(second)")
            #expect(second["write"] == "ok", "\(second)")
            #expect(second["tmpdir"]?.hasPrefix("second.") == true, "\(second)")
            #expect(access(root + "/" + parent + "/" + spare, F_OK) != 0)
        }
    }

    /// A host killed -9 leaves its spare's directory; the next host removes
    /// it at start, and one that stops leaves nothing at all.
    @Test func sparesAreRemovedAtStopAndAKilledHostsAtTheNextStart() throws {
        let (fixture, base, root) = try Self.spareFixtureWithOwnTemporaryBase()
        func parent() -> String? {
            (try? FileManager.default.contentsOfDirectory(atPath: root))?.first { $0.count == 16 }.map { root + "/" + $0 }
        }
        func spares() -> [String] {
            parent().flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0) }?.filter { $0.hasPrefix(".spare.") } ?? []
        }
        let killed = try fixture.startHost(environment: ["TMPDIR": base], without: [.namespaces])
        #expect(try Self.spareResult(fixture, killed, "first")["write"] == "ok")
        #expect(spares().count == 1, "\(spares())")
        killed.signal(SIGKILL)
        _ = try killed.waitForExit(timeout: 30)
        #expect(spares().count == 1, "\(spares())")

        let host = try fixture.startHost(environment: ["TMPDIR": base], without: [.namespaces])
        #expect(spares().isEmpty, "\(spares())")
        #expect(try Self.spareResult(fixture, host, "second")["write"] == "ok")
        #expect(spares().count == 1, "\(spares())")
        host.signal(SIGTERM)
        #expect(try host.waitForExit(timeout: 30) == 0)
        #expect(parent() == nil, "\(parent() ?? "")")
    }
}
