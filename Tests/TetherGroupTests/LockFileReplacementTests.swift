import Foundation
import Glibc
import Testing
@testable import TetherGroup
import TetherTestSupport

/// A read-locked lock file is replaced by a fresh, locked inode; a second
/// replacer that examined the same old file finds the first one's file
/// (held) where it swapped, puts it back, and holds nothing.
@Suite(.timed) struct LockFileReplacementTests {
    @Test func aSecondReplacerPutsTheFirstOnesFileBack() throws {
        let scratch = try TemporaryDirectory("tether-replace")
        let path = scratch.path + "/host.lock"
        try writeFile(path, "")
        let examined = try Syscall.lstat(path)
        let reader = try TestProcess("/usr/bin/env", ["python3", "-c", """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR)
            fcntl.lockf(fd, fcntl.LOCK_SH)
            print("locked", flush=True)
            time.sleep(600)
            """, path])
        #expect(try reader.readLine(timeout: 20) == "locked")

        let first = try #require(try LockFileReplacement.replace(path, examined: examined))
        defer { close(first.fd) }
        #expect(try Syscall.lstat(path).sameFile(as: first.info))
        // The second had looked at the same read-locked file.
        #expect(try LockFileReplacement.replace(path, examined: examined) == nil)
        #expect(try Syscall.lstat(path).sameFile(as: first.info), "the first holder's file was swapped away")
        // Nothing left beside it: the old file and the second's are unlinked.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["host.lock"])
        withExtendedLifetime(reader) {}
    }
}
