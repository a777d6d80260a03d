import Foundation
import Testing
@testable import TetherGroup
import TetherTestSupport

/// The one opener of group files: whatever flags a caller passes, the
/// descriptor never leaks into a child (invariant 1), a symlink at the last
/// component is refused, and a FIFO planted there is never waited on.
@Suite struct SyscallTests {
    @Test(arguments: [O_RDONLY, O_WRONLY | O_CREAT, O_RDWR | O_CREAT, O_WRONLY | O_APPEND | O_CREAT])
    func everyDescriptorIsCloseOnExecAndNonBlocking(_ flags: Int32) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/file"
        try writeFile(path, "x", mode: 0o600)
        let fd = try Syscall.open(path, flags)
        defer { Syscall.close(fd) }
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(symlink(path, dir.path + "/link") == 0)
        // O_NOFOLLOW: ELOOP, not the file behind the link.
        #expect(open(dir.path + "/link", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) < 0 && errno == ELOOP)
        #expect((try? Syscall.open(dir.path + "/link", flags)) == nil)
    }
}
