import Glibc
import Testing
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct PollWatcherTests {
    @Test func reportsReadabilityOfAPipe() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { close(fds[0]); close(fds[1]) }
        let (readFD, writeFD) = (fds[0], fds[1])
        let byte: UInt8 = try await onLoop { loop, finish in
            let poller = try PollWatcher(loop: loop, fileDescriptor: readFD)
            try poller.start(.readable) { result in
                guard case .success(let events) = result, events.contains(.readable) else { return }
                var byte: UInt8 = 0
                _ = read(readFD, &byte, 1)
                poller.close()
                finish(byte)
            }
            var value: UInt8 = 42
            _ = write(writeFD, &value, 1)
        }
        #expect(byte == 42)
    }
}
