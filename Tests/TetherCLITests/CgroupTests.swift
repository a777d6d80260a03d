import CTetherSystem
import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// A host in a delegated cgroup (as systemd's `Delegate=yes` makes one, and
/// marks with `trusted.delegate`) runs each extension in a cgroup of its
/// own: a process in it that is outside the launch's process group and
/// session (what an extension could leave where seccomp cannot refuse it
/// `setsid`; here the test puts one there) gets away neither from the
/// host's stop nor from a killed host's successor, nor from the read-only
/// checks.
@Suite(.timed, .enabled(if: TestCgroup.available, "needs a cgroup v2 hierarchy where this user may make a cgroup and mark it delegated"))
struct CgroupTests {
    /// A widget that stays.
    static let escapingScript = #"echo "started $$"; exec sleep 600"#

    /// `tether host` for `fixture`, started inside `cgroup`.
    func startHost(_ fixture: HostFixture, in cgroup: TestCgroup, _ extra: [String] = [],
                   without mechanisms: [KernelMechanism] = []) throws -> TestProcess {
        // Into the host's leaf if an earlier host made it: a cgroup whose
        // controllers are on for its children can hold no process.
        let join = #"d="$0"; [ -d "$d/host" ] && d="$d/host"; echo $$ > "$d/cgroup.procs" && exec "$@""#
        // No world of its own for an extension here: these tests follow its
        // processes by the pids it prints, which its PID namespace would hide.
        let command = withoutMechanisms(mechanisms + [.namespaces])
            + [tetherExecutable, "host", "--group", fixture.group.path, "--extensions-dir", fixture.extensions, "--grace", "1"]
        let host = try TestProcess("/bin/sh", ["-c", join, cgroup.directory] + command + extra)
        _ = try host.expectLineStarting("tether host ready: pid \(host.pid)")
        return host
    }

    /// A process in a session of its own, moved into `name`'s cgroup once it
    /// has started: outside its process group, inside its cgroup.
    func escapee(_ host: TestProcess, of name: String, _ fixture: HostFixture, _ cgroup: TestCgroup) throws -> TestProcess {
        _ = try host.expectLineStarting("[\(name)] started ", timeout: 15)
        let own = try #require(try sandbox(fixture, name)["cgroup"] as? String)
        let escapee = try TestProcess("/usr/bin/setsid", ["sleep", "600"])
        try "\(escapee.pid)".write(toFile: cgroup.mount + own + "/cgroup.procs", atomically: false, encoding: .utf8)
        return escapee
    }

    /// Its sandbox as `status` says, or empty while the host does not answer
    /// (the tests poll it: a host busy starting may miss one status's 5 s).
    func sandbox(_ fixture: HostFixture, _ name: String) throws -> [String: Any] {
        let result = try fixture.group.run(["status", "--json"])
        guard result.status == 0 else { return [:] }
        let entry = (try fixture.group.json(result)["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == name }
        return entry?["sandbox"] as? [String: Any] ?? [:]
    }

    /// Starts a child straight into the cgroup directory `argv[1]` names,
    /// which needs only a read-only descriptor of it (`clone3` with
    /// `CLONE_INTO_CGROUP`, Linux 5.7+; Landlock does not see it).
    static let cloneIntoCgroup = """
        import ctypes, errno, os, struct, sys
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        target = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
        # struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal,
        # stack, stack_size, tls, set_tid, set_tid_size, cgroup
        args = ctypes.create_string_buffer(struct.pack("11Q", 0x200000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, target), 88)
        pid = libc.syscall(435, args, 88)
        if pid == 0:
            os._exit(0)
        if pid > 0:
            os.waitpid(pid, 0)
            print("clone3: done", flush=True)
        else:
            print("clone3: refused", errno.errorcode.get(ctypes.get_errno(), "?"), flush=True)
        """

    @Test func anExtensionsWholeTreeRunsInItsCgroupAndEndsWithIt() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/clone3.py", Self.cloneIntoCgroup)
        // It cannot leave its cgroup, nor kill the host's (Landlock: no
        // writes under /sys; seccomp: no clone3).
        let leave = #"(echo $$ > "$0/host/cgroup.procs") 2>/dev/null && echo "leave: done" || echo "leave: refused"; "#
        let kill = #"(echo 1 > "$0/host/cgroup.kill") 2>/dev/null && echo "kill: done" || echo "kill: refused"; "#
        let clone = #"python3 "$1/clone3.py" "$0/host"; "#
        try fixture.addExtension("w", restart: "never", script: (leave + kill + clone)
                                    .replacingOccurrences(of: "$0", with: cgroup.directory)
                                    .replacingOccurrences(of: "$1", with: fixture.extensions)
                                 + Self.escapingScript)
        let host = try startHost(fixture, in: cgroup)
        defer { host.signal(SIGTERM) }
        #expect(try host.expectLineStarting("[w] leave: ", timeout: 15).last == "[w] leave: refused")
        #expect(try host.expectLineStarting("[w] kill: ", timeout: 15).last == "[w] kill: refused")
        #expect(try host.expectLineStarting("[w] clone3: ", timeout: 15).last == "[w] clone3: refused ENOSYS")
        // The host moved itself out of the way (a cgroup with children holds no processes).
        #expect(TestCgroup.cgroup(of: host.pid) == cgroup.path + "/host")
        let escaped = try escapee(host, of: "w", fixture, cgroup)
        let escapee = escaped.pid
        let own = try #require(try sandbox(fixture, "w")["cgroup"] as? String)
        #expect(own.hasPrefix(cgroup.path + "/ext-") && own.hasSuffix("-w.1"), "\(own)")
        #expect(TestCgroup.cgroup(of: escapee) == own)
        // A cgroup made inside its own (as an extension could where no
        // Landlock keeps it out of /sys) goes with it.
        #expect(mkdir(cgroup.mount + own + "/nested", 0o755) == 0)
        try "\(escapee)".write(toFile: cgroup.mount + own + "/nested/cgroup.procs", atomically: false, encoding: .utf8)
        #expect(TestCgroup.cgroup(of: escapee) == own + "/nested")
        // No deeper than its removal reaches.
        #expect(mkdir(cgroup.mount + own + "/nested/a", 0o755) == 0 && mkdir(cgroup.mount + own + "/nested/a/b", 0o755) == 0
                && mkdir(cgroup.mount + own + "/nested/a/b/c", 0o755) == 0)
        #expect(mkdir(cgroup.mount + own + "/nested/a/b/c/d", 0o755) == -1 && errno == EAGAIN)
        // Named in bytes that are not UTF-8 ("café" in Latin-1): gone too.
        #expect(mkdir(Array((cgroup.mount + own + "/nested/caf").utf8CString.dropLast()) + [CChar(bitPattern: 0xE9), 0], 0o755) == 0)
        let memoryBy = cgroup.offers("memory") ? "cgroup" : "rlimit+seccomp"
        #expect(try sandbox(fixture, "w")["memoryBy"] as? String == memoryBy)

        #expect(try fixture.group.run(["extension", "stop", "w"]).status == 0)
        // Outside its process group and session, it went with its cgroup.
        #expect(processEnded(escapee, within: 10), "pid \(escapee) outlived its extension")
        withExtendedLifetime(escaped) {}
        try waitFor("its cgroup's removal", timeout: 10) {
            _ = try? fixture.status()
            return !FileManager.default.fileExists(atPath: cgroup.mount + own)
        }
    }

    @Test func aKilledHostsExtensionCgroupsAreEndedByTheNextHost() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        try fixture.addExtension("w", restart: "never", script: Self.escapingScript)
        let host = try startHost(fixture, in: cgroup)
        let escaped = try escapee(host, of: "w", fixture, cgroup)
        let escapee = escaped.pid
        let own = try #require(try sandbox(fixture, "w")["cgroup"] as? String)
        host.signal(SIGKILL)
        _ = try host.waitForExit(timeout: 10)
        // The reaper ends the extension's process group; the escapee left it.
        #expect(!processEnded(escapee, within: 3), "the test needs a process that outlives a killed host")
        let next = try startHost(fixture, in: cgroup)
        defer { next.signal(SIGTERM) }
        #expect(processEnded(escapee, within: 10), "pid \(escapee) outlived the next host's start")
        withExtendedLifetime(escaped) {}
        // The new launch is numbered past the old one's, never reusing its name.
        try waitFor("the old cgroup's removal and the widget's new cgroup", timeout: 10) {
            let renewed = (try? sandbox(fixture, "w"))?["cgroup"] as? String
            return !FileManager.default.fileExists(atPath: cgroup.mount + own) && renewed != nil && renewed != own
        }
    }

    /// Even where a killed host's cgroup is already empty (and removed at
    /// once), a new launch is numbered past it: logs and status never name
    /// two launches alike.
    @Test func aNewLaunchNeverTakesAKilledHostsCgroupName() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        try fixture.addExtension("w", restart: "never", script: "exec sleep 600")
        let host = try startHost(fixture, in: cgroup)
        var old: String?
        try waitFor("the widget's cgroup", timeout: 10) {
            old = (try? sandbox(fixture, "w"))?["cgroup"] as? String
            return old != nil
        }
        let own = try #require(old)
        host.signal(SIGKILL)
        _ = try host.waitForExit(timeout: 10)
        // The reaper ends the widget's process group: its cgroup empties.
        try waitFor("the old cgroup to empty", timeout: 10) {
            !((try? String(contentsOfFile: cgroup.mount + own + "/cgroup.events", encoding: .utf8)) ?? "")
                .contains("populated 1")
        }
        let next = try startHost(fixture, in: cgroup)
        defer { next.signal(SIGTERM) }
        var renewed: String?
        try waitFor("the widget's new cgroup", timeout: 10) {
            renewed = (try? sandbox(fixture, "w"))?["cgroup"] as? String
            return renewed != nil
        }
        #expect(renewed != own, "a new launch took the killed host's \(own)")
    }

    /// A read-only keyboard's child that left its session is still the
    /// keyboard's (its cgroup): it cannot stop a feature. Without seccomp
    /// (which would refuse the setsid and the socket) the child leaves its
    /// session and speaks on the socket, not the keyboard's link.
    @Test func aReadOnlyKeyboardsEscapedChildIsStillReadOnly() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        let stop = """
            import json, os, socket
            os.close(int(os.environ["TETHER_HOST_FD"]))
            assert os.getsid(0) == os.getpid(), "still in the keyboard's session"
            s = socket.socket(socket.AF_UNIX); s.connect(os.environ["TETHER_GROUP"] + "/host.sock")
            s.sendall(b'{"jsonrpc":"2.0","id":7,"method":"\(HostMethod.featureStop)","params":{"name":"recording"}}\\n')
            answer = next(m for m in map(json.loads, s.makefile("rb")) if m.get("id") == 7)
            print("STOP", "refused" if "error" in answer else "done", flush=True)
            """
        // The keyboard says hello (which `extension start` waits for), then
        // starts that in a session of its own, with its link, and stays.
        let keyboard = """
            import os, signal, socket, subprocess, sys
            fd = int(os.environ["TETHER_HOST_FD"])
            s = socket.socket(fileno=fd)
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"\(HostMethod.hello)","params":{"name":"kb","role":"keyboard"}}\\n')
            s.makefile("rb").readline()
            try:
                child = subprocess.Popen([sys.executable, sys.argv[1]], start_new_session=True, pass_fds=[fd])
            except PermissionError:  # seccomp: no setsid; in its group, then
                child = subprocess.Popen([sys.executable, sys.argv[1]], pass_fds=[fd])
            child.wait()
            signal.pause()
            """
        try writeFile("\(fixture.extensions)/stop.py", stop)
        try writeFile("\(fixture.extensions)/kb.py", keyboard)
        let manifest = #"{"name":"kb","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/kb.py","\#(fixture.extensions)/stop.py"],"restart":"never","activation":"on-demand"}"#
        try writeFile("\(fixture.extensions)/kb.extension.json", manifest)
        let host = try startHost(fixture, in: cgroup, without: [.seccomp])
        defer { host.signal(SIGTERM) }
        #expect(try fixture.group.run(["feature", "start", "recording"]).status == 0)
        #expect(try fixture.group.run(["extension", "start", "kb"]).status == 0)
        let line = try host.expectLineStarting("[kb] STOP ", timeout: 15).last ?? ""
        #expect(line == "[kb] STOP refused", "\(line)")
        #expect(try fixture.group.run(["probe", "feature", "recording"]).status == 0)
    }

    /// `--require-sandbox` refusing a launch (a protection missing) leaves
    /// no cgroup behind.
    @Test func aRefusedLaunchLeavesNoCgroup() throws {
        let cgroup = try TestCgroup(delegated: true)
        let fixture = try HostFixture()
        try fixture.addExtension("kb", role: "keyboard", restart: "never", script: "exec sleep 600")
        let host = try startHost(fixture, in: cgroup, ["--require-sandbox"], without: [.seccomp])
        defer { host.signal(SIGTERM) }
        try waitFor("the refusal", timeout: 10) {
            (try? fixture.status()["extensions"] as? [[String: Any]])?.first?["state"] as? String == "failed"
        }
        #expect(cgroup.children() == ["host"], "\(cgroup.children())")
    }

    /// Only a cgroup systemd delegated (marked so) is the host's to manage.
    @Test func aCgroupNotDelegatedIsLeftAlone() throws {
        let cgroup = try TestCgroup(delegated: false)
        let fixture = try HostFixture()
        try fixture.addExtension("w", restart: "never", script: "exec sleep 600")
        let host = try startHost(fixture, in: cgroup)
        defer { host.signal(SIGTERM) }
        try waitFor("the widget to run", timeout: 10) {
            (try? fixture.status()["extensions"] as? [[String: Any]])?.first?["state"] as? String == "running"
        }
        #expect(TestCgroup.cgroup(of: host.pid) == cgroup.path)
        let sandbox = try sandbox(fixture, "w")
        #expect(sandbox["cgroup"] == nil)
        #expect(sandbox["memoryBy"] as? String == "rlimit+seccomp")
        #expect(cgroup.children().isEmpty, "\(cgroup.children())")
    }
}
