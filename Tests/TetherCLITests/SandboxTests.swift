import Foundation
import Testing
import TetherIPC
import TetherManifest
import TetherSandbox
import TetherTestSupport

/// Extensions are confined by the kernel, per role: Python extensions (not
/// the SDK, so the kernel is what refuses) under a real host try to write
/// the group, elsewhere and their TMPDIR, reach the network, signal the
/// host, stop a feature, and allocate without bound. On a kernel without
/// Landlock's signal scoping (before 6.12: the VM tier's 6.1) the same
/// tests expect what the README documents there: signals unscoped, and
/// `--require-sandbox` refusing every role for it.
@Suite(.timed, .enabled(if: KernelSupport.current.landlockABI != nil && KernelSupport.current.seccomp,
                "needs Landlock (Linux 5.13+) and seccomp"))
struct SandboxTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let role: String
        let openAccess: Bool
        let expected: [String: String]
        var testDescription: String { "\(role)\(openAccess ? " with open access" : "")" }

        /// What `support` lets through that the newest kernels refuse, and
        /// in a world of its own (`world`), what it does not see at all.
        func expected(on support: KernelSupport, world: Bool = ExtensionWorld.unavailable == nil) -> [String: String] {
            var expected = self.expected
            if !support.landlockScopes { expected["killHost"] = "ok" }
            if world {
                // Not there: the host's pid, the machine's files, the secrets
                // of a role that may not read them; the group read-only by its mount.
                expected.merge(["killHost": "ESRCH", "hostEnviron": "ENOENT", "outside": "ENOENT", "siblingLock": "ENOENT"]) { $1 }
                if role == "keyboard" && !openAccess {
                    for key in ["secrets", "otherSecrets", "secretsList", "secretsByLink", "secretsHardLink"] { expected[key] = "ENOENT" }
                    for key in ["group", "topLevelFile", "storeWrite", "unlinkSocket", "renameLocks", "renameHostLock",
                                "renameStoreLock"] { expected[key] = "EROFS" }
                }
            }
            #if arch(x86_64)
            expected["i386Call"] = "ENOSYS"
            #endif
            expected["secureBits"] = geteuid() == 0 ? "noroot" : "not root"
            return expected
        }
    }

    /// Refused to every role (the allowlist's argument filters and what it
    /// never names), and capabilities dropped.
    static let everyRole = [
        "lease": "EPERM", "prlimitHost": "EPERM", "prlimitSelf": "ok", "affinityHost": "EPERM", "priorityHost": "EPERM",
        "priorityUser": "EPERM", "growsDown": "EPERM", "privateMapping": "ok", "sysvShm": "EPERM", "inodeFlags": "EPERM",
        "chmod": "EPERM", "chmodWide": "EPERM", "chmodSetuid": "EPERM", "madeMode": "0o600", "madeDirectoryMode": "0o700", "umask": "0o0,0o0", "chown": "EPERM",
        "setxattr": "EPERM",
        "datagramPair": "EPERM", "userNamespace": "EPERM", "cloneParent": "EPERM", "sethostname": "EPERM", "keyring": "EPERM",
        "hostEnviron": "EACCES", "pidfd": "ENOSYS", "capabilities": "none", "bigFile": "EFBIG", "socketFile": "EACCES",
        "descriptorLimit": "1024/1024", "raiseDescriptors": "EPERM", "stackLimit": "8388608",
        "unlinkSocket": "EACCES", "renameHostLock": "EACCES", "renameLocks": "EACCES", "renameStoreLock": "EACCES",
        "topLevelFile": "EACCES", "storeWrite": "ok", "siblingLock": "EACCES", "userToken": "absent",
    ]

    static let cases = [
        Case(role: "keyboard", openAccess: false, expected: everyRole.merging([
            "group": "EACCES", "outside": "EACCES", "tmp": "ok", "tcp": "EACCES", "udp": "EACCES",
            "probe": "ok", "recording": "running", "killHost": "EPERM", "ptraceHost": "EPERM", "hello": "ok", "inheritedFd": "EBADF",
            "tiocsti": "EPERM", "stopWithoutHello": "error", "helloAsOther": "error", "stopAfterOtherHello": "error",
            "stopAfterHello": "error", "unixSocket": "EPERM", "socketPair": "ok", "ioUring": "ENOSYS", "lockHighBits": "EPERM",
            "groupRead": "ok", "secrets": "EACCES", "secretsList": "EACCES", "secretsByLink": "EACCES", "otherSecrets": "EACCES",
            "secretsHardLink": "EXDEV", "touch": "EPERM", "chmodTmp": "EPERM", "utimeExplicit": "EPERM",
            "storeWrite": "EACCES",
        ]) { $1 }),
        Case(role: "keyboard", openAccess: true, expected: everyRole.merging([
            "group": "ok", "outside": "EACCES", "tmp": "ok", "tcp": "ok", "udp": "ok", "killHost": "EPERM", "ptraceHost": "EPERM",
            "hello": "ok", "helloAsOther": "error", "unixSocket": "EPERM", "socketPair": "ok", "ioUring": "ENOSYS", "lockHighBits": "ok",
            "groupRead": "ok", "secrets": "ok", "touch": "ok", "chmodTmp": "ok", "utimeExplicit": "ok",
        ]) { $1 }),
        Case(role: "widget", openAccess: false, expected: everyRole.merging([
            "group": "ok", "outside": "EACCES", "tmp": "ok", "tcp": "ok", "udp": "ok", "killHost": "EPERM", "ptraceHost": "EPERM", "hello": "ok",
            "helloAsOther": "error", "unixSocket": "EPERM", "socketPair": "ok", "ioUring": "ENOSYS", "groupRead": "ok", "secrets": "ok",
            "touch": "ok", "chmodTmp": "ok", "utimeExplicit": "ok",
        ]) { $1 }),
    ]

    /// In a world of its own where the machine allows one, and as where
    /// user namespaces are refused (Landlock and seccomp alone).
    @Test(arguments: cases, [true, false])
    func theKernelEnforcesTheRolesTable(_ sandboxCase: Case, ownWorld: Bool) throws {
        let world = ownWorld && ExtensionWorld.unavailable == nil
        let fixture = try HostFixture()
        let outside = fixture.group.dir.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: fixture.group.path + "/shared", withIntermediateDirectories: true)
        try writeFile(fixture.group.path + "/shared/existing", "x", mode: 0o600)
        // A sibling's instance lock, as the host makes it.
        try FileManager.default.createDirectory(atPath: fixture.group.path + "/locks/extensions", withIntermediateDirectories: true)
        try writeFile(fixture.group.path + "/locks/extensions/sibling.lock", "", mode: 0o600)
        // The group's secrets, beside it (what `tether login` writes).
        let secrets = fixture.group.dir.path + "/.group.secrets"
        #expect(mkdir(secrets, 0o700) == 0)
        try writeFile(secrets + "/credentials.json", #"{"refresh":"SECRET"}"#, mode: 0o600)
        // Another group's, beside it.
        #expect(mkdir(fixture.group.dir.path + "/.other.secrets", 0o700) == 0)
        try writeFile(fixture.group.dir.path + "/.other.secrets/credentials.json", "{}", mode: 0o600)
        // A symbolic link to them beside the group leads nowhere either.
        #expect(symlink(".group.secrets", fixture.group.dir.path + "/link") == 0)
        // Beside its manifest: a path it sees in a world of its own too.
        let gate = fixture.extensions + "/gate"
        #expect(mkfifo(gate, 0o600) == 0)
        let listener = try LoopbackSocket(listening: true)
        try writeFile("\(fixture.extensions)/probe.py", Self.probeScript)
        let manifest: [String: Any] = [
            "name": "probe", "role": sandboxCase.role, "executable": "/usr/bin/env",
            "arguments": ["python3", "\(fixture.extensions)/probe.py", outside, String(listener.port), sandboxCase.role, gate],
            "openAccess": sandboxCase.openAccess, "activation": "on-demand", "restart": "never",
        ]
        try JSONSerialization.data(withJSONObject: manifest)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/probe.extension.json"))
        // The host inherits descriptor 7 without close-on-exec (as from a
        // careless launcher): no extension may get it.
        // ... and a stack limit of 64 MiB, where it may raise it, and a
        // token the user keeps for their own tools in its environment.
        let host = try TestProcess("/bin/sh", ["-c", #"ulimit -s 65536 2>/dev/null; export GH_TOKEN=users-own; exec 7>>"$0"; exec "$@""#, outside + "/leak"]
                                               + (world ? [] : withoutMechanisms([.namespaces])) + [tetherExecutable,
                                               "host", "--group", fixture.group.path, "--extensions-dir", fixture.extensions])
        defer { host.signal(SIGTERM) }
        _ = try host.expectLineStarting("tether host ready: pid \(host.pid)")
        #expect(try fixture.group.run(["feature", "start", "recording"]).status == 0)
        // What went wrong, if anything: the CLI's words and the host's.
        let started = try fixture.group.run(["extension", "start", "probe"])
        #expect(started.status == 0, "\(started.stdout)\(started.stderr)")
        let line = try host.expectLineStarting("[probe] RESULT ", timeout: 30).last ?? ""
        let result = try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst("[probe] RESULT ".count).utf8))
            as? [String: String])
        let temporary = try #require(result["tmpdir"])
        for (key, value) in sandboxCase.expected(on: .current, world: world) {
            #expect(result[key] == value, "\(key): \(result)")
        }
        // The group stays readable as it changes: a store replaced after the launch.
        #expect(try fixture.group.run(["defaults", "set", "k", "1"]).status == 0)
        let opened = open(gate, O_RDWR)
        #expect(opened >= 0)
        defer { close(opened) }
        #expect(write(opened, "go\n", 3) == 3)
        #expect(try host.expectLineStarting("[probe] LATER ", timeout: 15).last == "[probe] LATER ok")
        // Nothing was written where it was refused; the host lives on.
        #expect(!FileManager.default.fileExists(atPath: outside + "/x"))
        #expect((try? String(contentsOfFile: outside + "/leak", encoding: .utf8)) == "")
        #expect(processAlive(host.pid))
        let entry = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
        let sandbox = try #require(entry["sandbox"] as? [String: Any])
        #expect((sandbox["files"] as? String)?.hasPrefix("landlock ABI ") == true)
        #expect(sandbox["network"] as? String == (sandboxCase.role == "keyboard" && !sandboxCase.openAccess ? "denied" : "allowed"))
        #expect(sandbox["signals"] as? String == (KernelSupport.current.landlockScopes ? "scoped" : "none"))
        let role = try #require(ExtensionRole(rawValue: sandboxCase.role))
        #expect(sandbox["memoryLimitMiB"] as? Int == role.defaultMemoryLimitMiB)
        #expect(sandbox["memoryBy"] as? String == "rlimit+seccomp")
        #expect(sandbox["secrets"] as? String == (sandboxCase.role == "keyboard" && !sandboxCase.openAccess ? "hidden" : "readable"))

        #expect(sandbox["world"] as? String == (world ? "own" : "machine"))
        if world {
            // Its own tmpfs, not /tmp: the group it must see lies there.
            #expect(temporary == "/var/tmp")
            #expect(try fixture.group.run(["extension", "stop", "probe"]).status == 0)
            return
        }
        // Its TMPDIR is private while it runs, outside the group (where a
        // sibling could swap it), and gone once it ends.
        #expect(!temporary.hasPrefix(fixture.group.path) && temporary.contains("/tether-\(geteuid())/"), "\(temporary)")
        #expect((temporary as NSString).lastPathComponent.hasPrefix("probe."))
        var info = stat()
        #expect(lstat(temporary, &info) == 0 && info.st_mode & 0o777 == 0o700)
        // Removed before the stop is answered (its group was already empty).
        #expect(try fixture.group.run(["extension", "stop", "probe"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: temporary))
    }

    /// A host killed -9 cannot remove its extensions' TMPDIRs (with
    /// whatever secrets they hold); the next host on the group does, first.
    @Test func aKilledHostsTemporaryDirectoriesAreRemovedByTheNextHost() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("w", script: #"echo secret > "$TMPDIR/token" && echo "wrote $TMPDIR" && exec sleep 30"#)
        // A world's TMPDIR is a tmpfs that ends with it: this is the TMPDIR
        // of a host whose extensions get none.
        let host = try fixture.startHost(without: [.namespaces])
        let left = String(try host.expectLineStarting("[w] wrote ", timeout: 15).last?.dropFirst("[w] wrote ".count) ?? "")
        #expect((left as NSString).lastPathComponent.hasPrefix("w."), "\(left)")
        host.signal(SIGKILL)
        _ = try host.waitForExit(timeout: 10)
        #expect(FileManager.default.fileExists(atPath: left + "/token"))
        try fixture.withHost { next in
            #expect(!FileManager.default.fileExists(atPath: left))
        }
    }

    /// A Python widget that allocates 1 MiB at a time stays under its
    /// limit (sampled from /proc), ends with MemoryError, and is reported
    /// with the limit; the host is unaffected.
    @Test func aWidgetAllocatingWithoutBoundStaysUnderItsLimit() throws {
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/hog.py", """
            import signal, sys
            # Sampled at its peak: it holds what it got until SIGUSR1.
            signal.signal(signal.SIGUSR1, lambda *_: sys.exit(1))
            chunks = []
            try:
                for i in range(256):
                    chunks.append(bytearray(1 << 20))
                print("NO LIMIT after", len(chunks), "MiB", flush=True)
            except MemoryError:
                print("MemoryError after", len(chunks), "MiB", flush=True)
            signal.pause()
            """)
        let manifest: [String: Any] = [
            "name": "hog", "role": "widget", "executable": "/usr/bin/env", "arguments": ["python3", "\(fixture.extensions)/hog.py"],
            "memoryLimitMiB": 64, "activation": "always", "restart": "never",
        ]
        try JSONSerialization.data(withJSONObject: manifest)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/hog.extension.json"))
        try fixture.withHost { host in
            let ending = try host.expectLineStarting("[hog] ", containing: "after", timeout: 30).last ?? ""
            #expect(ending.hasPrefix("[hog] MemoryError after"), "\(ending)")
            let pid = try #require(hogPID(fixture))
            // Near the limit, not over it.
            let peakMiB = anonymousMiB(of: pid)
            #expect(peakMiB > 32 && peakMiB <= 64, "anonymous RSS at its peak: \(peakMiB) MiB")
            kill(pid, SIGUSR1)
            try waitFor("its exit in status", timeout: 10) {
                ((try? fixture.status()["extensions"] as? [[String: Any]])?.first?["lastExit"] as? [String: Any]) != nil
            }
            let entry = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
            let lastExit = try #require(entry["lastExit"] as? [String: Any])
            #expect(lastExit["code"] as? Int == 1)
            #expect(lastExit["memoryLimitMiB"] as? Int == 64)
            #expect(processAlive(host.pid))
            #expect(try fixture.group.run(["probe", "host"]).status == 0)
        }
    }

    /// Without a cgroup, RLIMIT_DATA counts private memory only: memory from
    /// memfd_create, a shared anonymous mapping or /dev/zero mapped shared
    /// would not count, so each is refused, and status says so. (795 MB was
    /// taken under a 64 MiB limit that way.)
    @Test func memoryTheLimitDoesNotCountIsRefused() throws {
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/shared.py", """
            import mmap, os
            def attempt(name, take):
                try:
                    take()
                    print(name, "taken", flush=True)
                except OSError as error:
                    print(name, "refused", error.errno, flush=True)
            def memfd():
                fd = os.memfd_create("hog")
                os.ftruncate(fd, 256 << 20)
                m = mmap.mmap(fd, 256 << 20)
                m.write(b"x" * (256 << 20))
            def anonymous():
                m = mmap.mmap(-1, 256 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
                m.write(b"x" * (256 << 20))
            def zero():
                fd = os.open("/dev/zero", os.O_RDWR)
                m = mmap.mmap(fd, 256 << 20, flags=mmap.MAP_SHARED)
                m.write(b"x" * (256 << 20))
            for name, take in [("memfd", memfd), ("anonymous", anonymous), ("zero", zero)]:
                attempt(name, take)
            print("done", flush=True)
            """)
        let manifest: [String: Any] = [
            "name": "shared", "role": "widget", "executable": "/usr/bin/env",
            "arguments": ["python3", "\(fixture.extensions)/shared.py"],
            "memoryLimitMiB": 64, "activation": "always", "restart": "never",
        ]
        try JSONSerialization.data(withJSONObject: manifest)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/shared.extension.json"))
        try fixture.withHost { host in
            let lines = try host.expectLine("[shared] done", timeout: 30).filter { $0.hasPrefix("[shared] ") }
            #expect(lines.contains("[shared] memfd refused 1"), "\(lines)")
            #expect(lines.contains("[shared] anonymous refused 1"), "\(lines)")
            #expect(lines.contains("[shared] zero refused 13"), "\(lines)")
            let entry = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
            #expect((entry["sandbox"] as? [String: Any])?["memoryBy"] as? String == "rlimit+seccomp")
        }
    }

    private func hogPID(_ fixture: HostFixture) -> Int32? {
        ((try? fixture.status()["extensions"] as? [[String: Any]])?.first?["pid"] as? Int).map { Int32($0) }
    }

    /// RssAnon: the private memory it touched, in MiB.
    private func anonymousMiB(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kib / 1024
    }

    /// Where the kernel lacks a mechanism (as such a kernel answers: see
    /// `withoutMechanisms`): the host runs the
    /// extension and says so once, or with `--require-sandbox` refuses that
    /// extension (exit 3) and runs the others.
    @Test func aMissingMechanismIsReportedOnceOrRefusedWithRequireSandbox() throws {
        do {
            let fixture = try HostFixture()
            try fixture.addExtension("kb", role: "keyboard", script: "exec sleep 30")
            try fixture.addExtension("w", role: "widget", script: "exec sleep 30")
            let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions,
                                                                "--grace", "2", "--require-sandbox"]),
                                       without: [.seccomp])
            defer { host.signal(SIGTERM) }
            _ = try host.expectLineStarting("tether host ready: pid \(host.pid)")
            // Where signals cannot be scoped, no role can be confined fully.
            let widgetState = KernelSupport.current.landlockScopes ? "running" : "failed"
            var kb: [String: Any] = [:]
            var widget: [String: Any] = [:]
            try waitFor("the keyboard to fail and the widget to be \(widgetState)", timeout: 10) {
                let entries = (try? fixture.status()["extensions"] as? [[String: Any]]) ?? []
                kb = entries.first { $0["name"] as? String == "kb" } ?? [:]
                widget = entries.first { $0["name"] as? String == "w" } ?? [:]
                return kb["state"] as? String == "failed" && widget["state"] as? String == widgetState
            }
            #expect((kb["lastExit"] as? [String: Any])?["code"] as? Int == 3)
            if KernelSupport.current.landlockScopes {
                #expect((widget["sandbox"] as? [String: Any])?["network"] as? String == "allowed")
            }
        }
        do {
            let fixture = try HostFixture()
            try fixture.addExtension("kb", role: "keyboard", script: "exec sleep 30")
            try fixture.addExtension("w", role: "widget", restart: "always", script: "exec sleep 30")
            let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions, "--grace", "2"]),
                                       without: [.landlock])
            _ = try host.expectLineStarting("tether host ready: pid \(host.pid)")
            var entries: [[String: Any]] = []
            try waitFor("both to run", timeout: 10) {
                entries = (try? fixture.status()["extensions"] as? [[String: Any]]) ?? []
                return entries.count == 2 && entries.allSatisfy { $0["state"] as? String == "running" }
            }
            for entry in entries {
                let sandbox = entry["sandbox"] as? [String: Any]
                #expect(sandbox?["files"] as? String == "none")
                #expect(sandbox?["signals"] as? String == "none")
            }
            // A restart launches again: still said only once.
            let widgetPID = try #require(entries.first { $0["name"] as? String == "w" }?["pid"] as? Int)
            kill(Int32(widgetPID), SIGKILL)
            try waitFor("the widget's restart", timeout: 10) {
                let entry = (try? fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "w" }
                return (entry?["pid"] as? Int).map { $0 != widgetPID } ?? false
            }
            host.signal(SIGTERM)
            #expect(try host.waitForExit(timeout: 15) == 0)
            let output = try host.remainingOutput() + (try host.standardError())
            let warnings = output.split(separator: "\n").filter { $0.contains("cannot confine extensions fully") }
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.contains("files (no Landlock") == true, "\(warnings)")
        }
    }

    /// The SDK's keyboard started by hand confines itself before the
    /// author's code runs: no new privileges, the network filter, Landlock
    /// (the kernel refuses its raw write and connection), a private TMPDIR
    /// removed when it ends.
    @Test func anSDKKeyboardStartedByHandConfinesItself() throws {
        let group = try TestGroup()
        let temporary = group.dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let keyboard = try TestProcess(exampleExecutable("example-keyboard"), ["--group", group.path],
                                       environment: ["TMPDIR": temporary])
        let lines = try Self.sandboxCheck(keyboard)
        let status = try String(contentsOfFile: "/proc/\(keyboard.pid)/status", encoding: .utf8)
        #expect(status.contains("NoNewPrivs:\t1"))
        #expect(status.contains("Seccomp:\t2"))
        #expect(lines.contains { $0.contains("writing the group: refused by the kernel (Permission denied)") }, "\(lines)")
        #expect(lines.contains { $0.contains("connecting to 127.0.0.1:80: refused by the kernel (Permission denied)") }, "\(lines)")
        let byHand = "\(temporary)/tether-\(geteuid())/by-hand"
        let own = try FileManager.default.contentsOfDirectory(atPath: byHand)
        #expect(own.count == 1 && own.first?.hasPrefix("example-keyboard.") == true, "\(own)")
        keyboard.closeStdin()
        let exit = try keyboard.waitForExit(timeout: 10)
        #expect(exit == 0, "\((try? keyboard.standardError(timeout: 5)) ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: byHand).isEmpty)
    }
}

/// Asks `condition` (a real request each time: `tether status`) until it
/// holds, bounded by count and time.
func waitFor(_ what: String, timeout: Double, _ condition: () -> Bool) throws {
    let deadline = TestTimeout.deadline(after: timeout)
    for _ in 0..<2_000 {
        if condition() { return }
        if Date() > deadline { break }
    }
    throw TestTimeout(what: what)
}
