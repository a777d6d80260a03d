import Glibc
import Testing
import TetherSandbox
import TetherTestSupport

@Suite struct PrivateTemporaryDirectoryTests {
    /// Made 0700; removed with a nested tree, a FIFO and a planted symlink,
    /// whose target survives.
    @Test func madePrivateAndRemovedWithoutFollowingSymlinks() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let outside = scratch.path + "/outside"
        try writeFile(outside, "keep")
        let made = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        var info = stat()
        #expect(lstat(made, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(mkdir(made + "/a", 0o700) == 0 && mkdir(made + "/a/b", 0o700) == 0)
        try writeFile(made + "/a/b/file", "x")
        #expect(mkfifo(made + "/a/fifo", 0o600) == 0)
        #expect(symlink(outside, made + "/a/link") == 0)
        #expect(symlink(scratch.path, made + "/dirlink") == 0)
        try PrivateTemporaryDirectory.remove(made)
        #expect(access(made, F_OK) != 0)
        #expect(access(outside, F_OK) == 0)
    }

    @Test func aSymlinkedParentIsRefused() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        #expect(mkdir(scratch.path + "/real", 0o700) == 0)
        #expect(symlink(scratch.path + "/real", scratch.path + "/tmp") == 0)
        #expect(throws: (any Error).self) { try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "w") }
    }

    @Test func leftoversOfAPrefixAreRemoved() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let parent = scratch.path + "/tmp"
        let a = try PrivateTemporaryDirectory.make(in: parent, prefix: "widget")
        let b = try PrivateTemporaryDirectory.make(in: parent, prefix: "keyboard")
        try writeFile(a + "/secret", "token")
        PrivateTemporaryDirectory.removeLeftovers(in: parent, prefix: "widget")
        #expect(access(a, F_OK) != 0)
        #expect(access(b, F_OK) == 0)
    }
}
