import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

/// Invariant 26: where the kernel allows it, each launch has a world of its
/// own. Python extensions (no SDK: the kernel is what answers) under a real
/// host look at what they can see, lock and fill.
@Suite(.timed, .enabled(if: ExtensionWorld.unavailable == nil, "user namespaces are refused here"))
struct ExtensionWorldTests {
    static let probe = #"""
        import errno, fcntl, json, os, socket, sys
        group, outside, sibling, abstract = sys.argv[1:5]
        host = os.environ["TETHER_HOST_PID"]
        r = {"pid": os.getpid(), "processes": sorted(p for p in os.listdir("/proc") if p.isdigit())}
        def attempt(name, f):
            try:
                value = f(); r[name] = "ok" if value is None else value
            except OSError as e:
                r[name] = errno.errorcode.get(e.errno, str(e.errno))
        attempt("killHost", lambda: os.kill(int(host), 0))
        for name, path in [("home", "/home"), ("root", "/root"), ("dpkg", "/var/lib/dpkg"), ("run", "/run/user"),
                           ("outside", outside)]:
            attempt(name, lambda path=path: os.listdir(path) and None)
        attempt("instanceLocks", lambda: ",".join(os.listdir(os.path.join(group, "locks", "extensions"))))
        def lock_sibling():
            fd = os.open(sibling, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        attempt("lockSibling", lock_sibling)
        attempt("makeInstanceLock", lambda: os.close(os.open(os.path.join(group, "locks", "extensions", "mine.lock"),
                                                             os.O_WRONLY | os.O_CREAT, 0o600)))
        attempt("devWrite", lambda: os.close(os.open("/dev/planted", os.O_WRONLY | os.O_CREAT, 0o600)))
        attempt("groupRead", lambda: os.listdir(group) and None)
        attempt("etc", lambda: ",".join(sorted(os.listdir("/etc"))))
        attempt("hosts", lambda: open("/etc/hosts").read())
        attempt("etcWrite", lambda: open("/etc/hosts", "a").close())
        # The machine's root lies beneath its own: nothing may uncover it.
        status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
        r["capabilities"] = ",".join(status[k].strip() for k in ["CapEff", "CapPrm", "CapBnd", "CapAmb"])
        attempt("chroot", lambda: os.chroot("/"))
        above, top = os.stat("/.."), os.stat("/")
        r["aboveRoot"] = "same" if (above.st_dev, above.st_ino) == (top.st_dev, top.st_ino) else "other"
        attempt("unixSockets", lambda: "seen" if abstract in open("/proc/net/unix").read() else "unseen")
        tmp = os.environ["TMPDIR"]
        st = os.statvfs(tmp)
        r["tmpMiB"] = st.f_blocks * st.f_frsize // 1048576
        def fill(path, mode=None):
            # 3 MiB each (under the size a file may have) to two open files
            # unlinked (or never named): ENOSPC if the kernel counts them.
            fds = []
            try:
                for i in range(2):
                    named = path + str(i)
                    fds.append(os.open(path, mode) if mode else os.open(named, os.O_RDWR | os.O_CREAT, 0o600))
                    if not mode: os.unlink(named)
                    for _ in range(3): os.write(fds[-1], b"x" * 1048576)
            finally:
                for fd in fds: os.close(fd)
        attempt("unlinkedFile", lambda: fill(os.path.join(tmp, "gone")))
        attempt("tmpfile", lambda: fill(tmp, os.O_RDWR | os.O_TMPFILE))
        def links():
            for i in range(5000): os.symlink("y" * 4000, os.path.join(tmp, "l%d" % i))
        attempt("symlinks", links)
        print("RESULT " + json.dumps(r, sort_keys=True), flush=True)
        sys.stdin.read()
        """#

    @Test(arguments: ["widget", "keyboard"])
    func anExtensionSeesOnlyItsOwnWorld(role: String) throws {
        let fixture = try HostFixture()
        let outside = fixture.group.dir.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        // A sibling's instance lock, as the host makes it for its launch.
        let locks = fixture.group.path + "/locks/extensions"
        try FileManager.default.createDirectory(atPath: locks, withIntermediateDirectories: true)
        try writeFile(locks + "/sibling.lock", "", mode: 0o600)
        // An abstract socket of the machine's: an offline role's network
        // namespace has none of them.
        let abstract = "tether-world-\(UUID().uuidString.prefix(8))"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in abstract.utf8.enumerated() { path[index + 1] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sa_family_t>.size + 1 + abstract.utf8.count))
            }
        }
        #expect(bound == 0)
        try writeFile("\(fixture.extensions)/probe.py", Self.probe)
        try fixture.addExtension("sibling", script: "exec sleep 300")
        // A file its arguments name in the group's parent: that directory
        // (other groups, their secrets, "outside") is never bound for it.
        let planted = fixture.group.dir.path + "/planted.py"
        try writeFile(planted, "", mode: 0o600)
        let manifest: [String: Any] = [
            "name": "probe", "role": role, "executable": "/usr/bin/env", "diskLimitMiB": 4, "restart": "never",
            "activation": "on-demand",
            "arguments": ["python3", "\(fixture.extensions)/probe.py", fixture.group.path, outside, locks + "/sibling.lock",
                          abstract, planted],
        ]
        try JSONSerialization.data(withJSONObject: manifest)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/probe.extension.json"))
        let host = try fixture.startHost()
        defer { host.stopAlways() }
        #expect(try fixture.group.run(["extension", "start", "probe"]).status == 0)
        let line = try host.expectLineStarting("[probe] RESULT ", timeout: 30).last ?? ""
        let result = try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst("[probe] RESULT ".count).utf8))
            as? [String: Any])
        // Its own PID namespace, as its init: the host is not there.
        #expect(result["pid"] as? Int == 1, "\(result)")
        #expect(result["processes"] as? [String] == ["1"], "\(result)")
        #expect(result["killHost"] as? String == "ESRCH")
        // Nothing of the machine but what programs need.
        for name in ["home", "root", "dpkg", "run", "outside"] {
            #expect(result[name] as? String == "ENOENT", "\(name): \(result)")
        }
        #expect(result["groupRead"] as? String == "ok")
        // Its /etc: what programs read there (the host's copies), read-only.
        let shown = Set(ExtensionWorld.configuration.map { String($0.split(separator: "/").last ?? "") })
        let etc = (result["etc"] as? String ?? "").split(separator: ",").map(String.init)
        #expect(etc.contains("hosts") && etc.contains("ssl") && etc.allSatisfy(shown.contains), "\(result)")
        #expect(result["hosts"] as? String == (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8)), "\(result)")
        #expect(["EROFS", "EACCES"].contains(result["etcWrite"] as? String ?? ""), "\(result)")
        // Its root is entered by chroot over the machine's: no capability
        // (not even in its own user namespace) could chroot or unmount back.
        #expect(result["capabilities"] as? String == Array(repeating: "0000000000000000", count: 4).joined(separator: ","),
                "\(result)")
        #expect(result["chroot"] as? String == "EPERM", "\(result)")
        #expect(result["aboveRoot"] as? String == "same", "\(result)")
        // No sibling's instance lock to take: the host's alone.
        #expect(result["instanceLocks"] as? String == "", "\(result)")
        #expect(result["lockSibling"] as? String == "ENOENT", "\(result)")
        #expect(["ENOENT", "EROFS", "EACCES"].contains(result["makeInstanceLock"] as? String ?? ""), "\(result)")
        // Its /dev: the devices alone, in its read-only root.
        #expect(["EROFS", "EACCES"].contains(result["devWrite"] as? String ?? ""), "\(result)")
        // An offline role's abstract sockets are its network namespace's.
        if role == "keyboard" { #expect(result["unixSockets"] as? String == "unseen", "\(result)") }
        // Its TMPDIR: a tmpfs of its disk limit, which counts unlinked and
        // unnamed files and symlinks.
        #expect(result["tmpMiB"] as? Int == 4, "\(result)")
        for name in ["unlinkedFile", "tmpfile", "symlinks"] {
            #expect(result[name] as? String == "ENOSPC", "\(name): \(result)")
        }
        let entry = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "probe" })
        #expect((entry["sandbox"] as? [String: Any])?["world"] as? String == "own")
        // The sibling, launched by the host all along, was never held elsewhere.
        let sibling = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "sibling" })
        #expect(sibling["state"] as? String == "running", "\(sibling)")
    }

    /// Without Landlock (a kernel before 5.13), the world's mounts alone
    /// keep what an extension must not change: its root and /dev are
    /// read-only, and the instance locks' mask is a removed directory,
    /// where nothing can be made.
    @Test func itsRootAndTheMaskHoldWithoutLandlock() throws {
        let fixture = try HostFixture()
        let locks = fixture.group.path + "/locks/extensions"
        try FileManager.default.createDirectory(atPath: locks, withIntermediateDirectories: true)
        try writeFile("\(fixture.extensions)/write.py", #"""
            import errno, os, sys
            def attempt(path):
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
                    return "ok"
                except OSError as e:
                    return errno.errorcode.get(e.errno, str(e.errno))
            print("WROTE " + " ".join(attempt(p) for p in [sys.argv[1] + "/mine.lock", "/dev/planted", "/planted"]), flush=True)
            sys.stdin.read()
            """#)
        try writeFile("\(fixture.extensions)/write.extension.json",
                      #"{"name":"write","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/write.py","\#(locks)"],"activation":"on-demand"}"#)
        try fixture.withHost(without: [.landlock]) { host in
            #expect(try fixture.group.run(["extension", "start", "write"], timeout: 30).status == 0)
            let line = try host.expectLineStarting("[write] WROTE ", timeout: 30).last ?? ""
            #expect(line == "[write] WROTE ENOENT EROFS EROFS", "\(line)")
        }
    }

    /// A hello that says its SIGTERM handler ends it is taken at its word:
    /// the host reads no signal mask and sends SIGTERM alone, so one that
    /// says so and has no handler (its namespace's init, which the kernel
    /// spares the signal) waits out its grace for the SIGKILL; one that
    /// says nothing is killed at once.
    @Test func aHelloThatEndsOnSigtermIsTakenAtItsWord() throws {
        let fixture = try HostFixture()
        for (name, fields) in [("quiet", nil), ("claims", #""endsOnSigterm":true"#)] {
            try fixture.addExtension(name, restart: "never", activation: "on-demand",
                                     script: HostFixture.shellHello(name, fields: fields) + "\nexec sleep 300")
        }
        try fixture.withHost(arguments: ["--grace", "5"]) { (_: TestProcess) throws in
            var took: [String: Double] = [:]
            for name in ["quiet", "claims"] {
                // Attached, so its hello (and claim) is the host's before the stop.
                let start = try fixture.group.run(["extension", "start", name], timeout: 30)
                #expect(start.status == 0 && start.stdout.hasPrefix("\(name) attached"), "\(start.stdout)")
                let started = Date()
                #expect(try fixture.group.run(["extension", "stop", name], timeout: 30).status == 0)
                took[name] = Date().timeIntervalSince(started)
            }
            #expect(took["quiet", default: 99] < 4, "\(took)")
            #expect(took["claims", default: 0] >= 4.5, "\(took)")
        }
    }

    /// The claim is its launch's: the launch after one that claimed (and
    /// crashed), which claims nothing, is killed at once again.
    @Test func aClaimEndsWithItsLaunch() throws {
        let fixture = try HostFixture()
        let plain = HostFixture.shellHello("flip") + "\nexec sleep 300"
        try fixture.addExtension("flip", restart: "on-failure", activation: "on-demand",
                                 script: HostFixture.shellHello("flip", fields: #""endsOnSigterm":true"#) + "\nexec sleep 300")
        try fixture.withHost(arguments: ["--grace", "5"]) { host in
            let start = try fixture.group.run(["extension", "start", "flip"], timeout: 30)
            #expect(start.status == 0 && start.stdout.hasPrefix("flip attached"), "\(start.stdout)")
            let pid = try #require(Int32(start.stdout.split(separator: " ").last?.filter(\.isNumber) ?? ""))
            _ = try host.expectLineStarting("extension 'flip' attached", timeout: 30)
            // Its next launch says a plain hello.
            try fixture.addExtension("flip", restart: "on-failure", activation: "on-demand", script: plain)
            #expect(kill(pid, SIGKILL) == 0)
            _ = try host.expectLineStarting("extension 'flip' killed by signal 9", timeout: 30)
            let again = try fixture.group.run(["extension", "start", "flip"], timeout: 30)
            #expect(again.status == 0 && again.stdout.hasPrefix("flip attached"), "\(again.stdout)")
            let started = Date()
            #expect(try fixture.group.run(["extension", "stop", "flip"], timeout: 30).status == 0)
            #expect(Date().timeIntervalSince(started) < 4)
        }
    }

    /// Its root is entered by chroot over the machine's: a user namespace
    /// within it would give back CAP_SYS_CHROOT, and a chroot below its
    /// root then ".." would lead out. None is made, even on a kernel
    /// without seccomp (whose filter refuses them too).
    @Test func noUserNamespaceWithinAWorldEvenWithoutSeccomp() throws {
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/nest.py", #"""
            import ctypes, errno, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            rc = libc.unshare(0x10000000)
            print("NESTED " + ("ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno(), "?")), flush=True)
            sys.stdin.read()
            """#)
        try writeFile("\(fixture.extensions)/nest.extension.json",
                      #"{"name":"nest","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/nest.py"],"activation":"on-demand"}"#)
        try fixture.withHost(without: [.seccomp]) { host in
            #expect(try fixture.group.run(["extension", "start", "nest"], timeout: 30).status == 0)
            let line = try host.expectLineStarting("[nest] NESTED ", timeout: 30).last ?? ""
            #expect(line == "[nest] NESTED ENOSPC", "\(line)")
        }
    }

    /// An executable named through a symlinked directory (SwiftPM's
    /// `.build/release`) is exec'd by that path in its world: the directory
    /// is there under both names.
    @Test(.waits) func anExecutableReachedThroughASymlinkedDirectoryRunsInItsWorld() throws {
        let fixture = try HostFixture()
        let programs = try TemporaryDirectory("tether-world-link")
        try FileManager.default.createDirectory(atPath: programs.path + "/real", withIntermediateDirectories: true)
        try writeFile(programs.path + "/real/hello.sh", "#!/bin/sh\n\(HostFixture.shellHello("linked"))\necho \"ran as $0, pid $$\"\nexec sleep 300\n",
                      mode: 0o755)
        #expect(symlink("real", programs.path + "/linked") == 0)
        try writeFile("\(fixture.extensions)/linked.extension.json",
                      #"{"name":"linked","role":"widget","executable":"\#(programs.path)/linked/hello.sh","activation":"on-demand"}"#)
        try fixture.withHost { host in
            #expect(try fixture.group.run(["extension", "start", "linked"], timeout: 30).status == 0)
            let line = try host.expectLineStarting("[linked] ran as", timeout: 30).last ?? ""
            #expect(line == "[linked] ran as \(programs.path)/linked/hello.sh, pid 1", "\(line)")
            let entry = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
            #expect((entry["sandbox"] as? [String: Any])?["world"] as? String == "own")
        }
        // A host that stopped cleanly left nothing of its own in TMPDIR
        // (its world's /etc copies included).
        let root = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/tether-\(geteuid())"
        let left = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let ours = left.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(root)/\($0)/group")) == fixture.group.path }
        #expect(ours.isEmpty, "\(ours.map { (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\($0)")) ?? [] })")
    }

    /// Where user namespaces are refused, extensions run as before, and
    /// every place that reports it says so; `--require-sandbox` refuses.
    @Test func whereNamespacesAreRefusedEveryReportSaysSo() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("plain", script: #"echo "at $TMPDIR" && exec sleep 300"#)
        try fixture.withHost(without: [.namespaces]) { host in
            let line = try host.expectLineStarting("[plain] at ", timeout: 30).last ?? ""
            #expect(line.contains("/tether-\(geteuid())/"), "\(line)")
            let entry = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
            #expect((entry["sandbox"] as? [String: Any])?["world"] as? String == "machine")
            try host.waitForError(containing: "user namespaces are refused")
        }
        let doctor = try tether(fixture.group.withGroup(["doctor", "--json"]), without: [.namespaces])
        let findings = try #require(try fixture.group.json(doctor)["mechanisms"] as? [[String: Any]])
        let namespaces = try #require(findings.first { $0["mechanism"] as? String == "namespaces" })
        #expect(namespaces["enforced"] as? Bool == false, "\(namespaces)")
        #expect((namespaces["fix"] as? String)?.contains("unprivileged_userns_clone") == true, "\(namespaces)")
        let required = try fixture.startHost(arguments: ["--require-sandbox"], without: [.namespaces])
        defer { required.stopAlways() }
        // A kernel without Landlock's scoping is refused for that first.
        try required.waitForError(containing: KernelSupport.current.landlockScopes ? "its own world" : "--require-sandbox")
    }
}

/// Where this kernel lets an unprivileged process make a user namespace
/// with its own mounts and processes (util-linux's `unshare` says), the
/// host must find worlds available: the suite above is no silent skip.
@Suite struct ExtensionWorldAvailabilityTests {
    @Test func whereTheKernelAllowsItTheHostGivesWorlds() throws {
        let unshare = try runCommand("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "--pid", "--fork",
                                                           "--mount-proc", "/bin/true"])
        guard unshare.status == 0 else { return }
        #expect(ExtensionWorld.unavailable == nil, "unshare makes one here, the host could not: \(ExtensionWorld.unavailable ?? "")")
    }
}
