import Glibc
import SystemPackage
import Testing
import TetherLoop
import TetherTestSupport

@Suite struct ChildProcessTests {
    @Test func reportsTheExitStatus() async throws {
        let status: TerminationStatus = try await onLoop { loop, finish in
            _ = try ChildProcess.spawn(loop: loop, ProcessOptions(executable: "sh", arguments: ["-c", "exit 7"])) {
                finish($0)
            }
        }
        #expect(status == .exited(7))
    }

    @Test func reportsTheSignalThatEndedIt() async throws {
        let status: TerminationStatus = try await onLoop { loop, finish in
            let child = try ChildProcess.spawn(
                loop: loop, ProcessOptions(executable: "sleep", arguments: ["60"], stdout: .ignore)) { finish($0) }
            try child.signal(SIGTERM)
        }
        #expect(status == .signaled(SIGTERM))
        #expect(status.shellCode == 128 + SIGTERM)
    }

    @Test func missingExecutableFailsWithENOENT() async throws {
        let error: Errno? = try await onLoop { (loop: EventLoop, finish: @escaping (Errno?) -> Void) in
            do {
                _ = try ChildProcess.spawn(loop: loop, ProcessOptions(executable: "/nonexistent/tether-nope")) { _ in }
                finish(nil)
            } catch {
                finish(error as? Errno)
            }
        }
        #expect(error == .noSuchFileOrDirectory)
    }

    @Test func pipesStdinAndStdout() async throws {
        let (output, status): (String, TerminationStatus) = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            var ended = false
            var exit: TerminationStatus?
            let child = try ChildProcess.spawn(
                loop: loop, ProcessOptions(executable: "tr", arguments: ["a-z", "A-Z"], stdin: .pipe, stdout: .pipe)
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
    @Test func childInheritsNoCloseOnExecDescriptor() async throws {
        let dir = try TemporaryDirectory()
        let marker = dir.path + "/marker"
        let fd = open(marker, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        let listing: String = try await onLoop { loop, finish in
            var bytes: [UInt8] = []
            let child = try ChildProcess.spawn(loop: loop, ProcessOptions(
                executable: "sh", arguments: ["-c", "for f in /proc/$$/fd/*; do readlink $f; done"],
                stdout: .pipe)) { _ in }
            try child.stdout?.startReading { event in
                if case .data(let chunk) = event { bytes += chunk } else { finish(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        #expect(!listing.contains("marker"))
        #expect(listing.contains("pipe:"), "the listing itself went through a pipe: \(listing)")
    }
}
