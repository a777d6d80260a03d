import CTetherSystem
import Glibc
import SystemPackage
import Testing
import TetherLoop
import TetherTestSupport

/// The spawn with nothing between fork and exec, and with a step there (a
/// parent-death signal, which also checks that the parent lives).
enum SpawnPath: CaseIterable, Sendable {
    case plain, parentDeathSignal

    func options(_ options: ProcessOptions) -> ProcessOptions {
        var options = options
        if self == .parentDeathSignal { options.parentDeathSignal = SIGKILL }
        return options
    }
}

@Suite(.timed) struct ChildProcessTests {
    @Test(arguments: SpawnPath.allCases) func reportsTheExitStatus(_ path: SpawnPath) async throws {
        let status: TerminationStatus = try await onLoop { loop, finish in
            _ = try ChildProcess.spawn(loop: loop, path.options(ProcessOptions(executable: "sh", arguments: ["-c", "exit 7"]))) {
                finish($0)
            }
        }
        #expect(status == .exited(7))
    }

    @Test(arguments: SpawnPath.allCases) func reportsTheSignalThatEndedIt(_ path: SpawnPath) async throws {
        let status: TerminationStatus = try await onLoop { loop, finish in
            let child = try ChildProcess.spawn(
                loop: loop, path.options(ProcessOptions(executable: "sleep", arguments: ["60"], stdout: .ignore))) { finish($0) }
            try child.signal(SIGTERM)
        }
        #expect(status == .signaled(SIGTERM))
        #expect(status.shellCode == 128 + SIGTERM)
    }

    @Test(arguments: SpawnPath.allCases) func missingExecutableFailsWithENOENT(_ path: SpawnPath) async throws {
        let error: Errno? = try await onLoop { (loop: EventLoop, finish: @escaping (Errno?) -> Void) in
            do {
                _ = try ChildProcess.spawn(loop: loop, path.options(ProcessOptions(executable: "/nonexistent/tether-nope"))) { _ in }
                finish(nil)
            } catch {
                finish(error as? Errno)
            }
        }
        #expect(error == .noSuchFileOrDirectory)
    }

    @Test(arguments: SpawnPath.allCases) func pipesStdinAndStdout(_ path: SpawnPath) async throws {
        let (output, status): (String, TerminationStatus) = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            var ended = false
            var exit: TerminationStatus?
            let child = try ChildProcess.spawn(
                loop: loop, path.options(ProcessOptions(executable: "tr", arguments: ["a-z", "A-Z"], stdin: .pipe, stdout: .pipe))
            ) { status in
                exit = status
                if ended { finish((String(decoding: bytes, as: UTF8.self), status)) }
            }
            try child.stdout?.startReading { event in
                switch event {
                case .data(let chunk): bytes += chunk
                case .end, .failed:
                    ended = true
                    if let exit { finish((String(decoding: bytes, as: UTF8.self), exit)) }
                }
            }
            child.stdin?.write(Array("hello tether\n".utf8)) { _ in child.stdin?.close() }
        }
        #expect(output == "HELLO TETHER\n")
        #expect(status == .exited(0))
    }

    /// Invariant 1 at the lowest level: a close-on-exec descriptor of the
    /// parent is not open in a child spawned through the loop.
    @Test(arguments: SpawnPath.allCases) func childInheritsNoCloseOnExecDescriptor(_ path: SpawnPath) async throws {
        let dir = try TemporaryDirectory()
        let marker = dir.path + "/marker"
        let fd = open(marker, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        let listing: String = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            let child = try ChildProcess.spawn(loop: loop, path.options(ProcessOptions(
                executable: "sh", arguments: ["-c", "for f in /proc/$$/fd/*; do readlink $f; done"],
                stdout: .pipe))) { _ in }
            try child.stdout?.startReading { event in
                if case .data(let chunk) = event { bytes += chunk } else { finish(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        #expect(!listing.contains("marker"))
        #expect(listing.contains("pipe:"), "the listing itself went through a pipe: \(listing)")
    }

    /// Own spawn (every extension the host starts): not even a descriptor
    /// that lacks close-on-exec (libcurl's socket pairs, what the host
    /// inherited) reaches the child; only its stdio does.
    @Test func ownSpawnPassesOnNothingButStdio() async throws {
        let dir = try TemporaryDirectory()
        let fd = open(dir.path + "/inheritable", O_CREAT | O_RDWR, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        let listing: String = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            let child = try ChildProcess.spawn(loop: loop, SpawnPath.parentDeathSignal.options(ProcessOptions(
                executable: "sh", arguments: ["-c", "for f in /proc/$$/fd/*; do readlink $f; done"],
                stdout: .pipe))) { _ in }
            try child.stdout?.startReading { event in
                if case .data(let chunk) = event { bytes += chunk } else { finish(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        #expect(!listing.contains("inheritable"), "\(listing)")
        #expect(listing.contains("pipe:"), "the listing itself went through a pipe: \(listing)")
    }

    /// Own spawn: every signal starts at its default and unblocked, though
    /// this process ignores SIGPIPE and the loop thread blocks others; the
    /// descriptor limit is the one asked for, though this process has more
    /// open; stdio may be 0, 1, 2 themselves.
    @Test func ownSpawnResetsSignalsAndSetsTheDescriptorLimit() async throws {
        // Ignored for good, as the test process ignores it once a test
        // child runs (TestProcess): put back, it could end a test writing
        // to a closed pipe beside this one.
        signal(SIGPIPE, SIG_IGN)
        // Numbers past the child's limit in use here (a busy host's are),
        // so the child's copies of its stdio land above it too.
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let extra = (0..<300).map { _ in fcntl(null, F_DUPFD_CLOEXEC, 0) }
        defer { (extra + [null]).filter { $0 >= 0 }.forEach { close($0) } }
        let output: String = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            let child = try ChildProcess.spawn(loop: loop, ProcessOptions(
                executable: "sh", arguments: ["-c", "ulimit -n; exec grep -E '^Sig(Ign|Blk)' /proc/self/status"],
                stdin: .inherit, stdout: .pipe, stderr: .inherit, descriptorSoftLimit: 200)) { _ in }
            try child.stdout?.startReading { event in
                if case .data(let chunk) = event { bytes += chunk } else { finish(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("SigIgn:\t0000000000000000"), "\(output)")
        #expect(lines.contains("SigBlk:\t0000000000000000"), "\(output)")
        #expect(lines.first == "200", "\(output)")
    }

    /// Own spawn: the child carries the parent-death signal asked for (the
    /// kernel sends it when the spawning thread ends; it survives exec), as
    /// the child itself reads it back with PR_GET_PDEATHSIG.
    @Test func ownSpawnSetsTheParentDeathSignal() async throws {
        let script = "import ctypes; s = ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(s)); print(s.value)"
        let output: String = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            let child = try ChildProcess.spawn(loop: loop, ProcessOptions(
                executable: "python3", arguments: ["-c", script], stdout: .pipe, parentDeathSignal: SIGUSR1)) { _ in }
            try child.stdout?.startReading { event in
                if case .data(let chunk) = event { bytes += chunk } else { finish(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        #expect(output == "\(SIGUSR1)\n")
    }

    /// Own spawn: a file that cannot be run fails the spawn with the
    /// child's errno (the child is reaped inside the spawn).
    @Test func ownSpawnReportsTheExecError() async throws {
        let dir = try TemporaryDirectory()
        let script = dir.path + "/not-executable"
        let fd = open(script, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        close(fd)
        let error: Errno? = try await onLoop { (loop: EventLoop, finish: @escaping (Errno?) -> Void) in
            do {
                _ = try ChildProcess.spawn(loop: loop, ProcessOptions(executable: script, parentDeathSignal: SIGKILL)) { _ in }
                finish(nil)
            } catch {
                finish(error as? Errno)
            }
        }
        #expect(error == .permissionDenied)
    }
}
