import Glibc
import Testing
import TetherSandbox
import TetherTestSupport

/// The TMPDIR an extension started by hand makes for itself: held while it
/// lives, so other starts keep it; swept at the next start once its holder
/// is gone (a SIGKILL leaves it behind). In-process: a hold is an open
/// directory's `flock`, so this process's holds stand for live extensions'.
/// (Each `make` keeps its descriptor for the process's life, by design: a
/// few stay open in the test process, on directories removed with the test's.)
@Suite(.timed) struct ByHandTemporaryDirectoryTests {
    /// Whether another process could take `path`'s hold now.
    static func isHeld(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) != 0
    }

    /// BASE/tether-UID/by-hand/PREFIX.XXXXXX, 0700, held and marked in use
    /// (so no other by-hand extension, which may remove empty directories
    /// there, can remove it); a second start keeps the first's.
    @Test func aLiveOnesIsHeldMarkedAndKept() throws {
        let base = try TemporaryDirectory("tether-by-hand")
        let first = try ByHandTemporaryDirectory.make(base: base.path, prefix: "keyboard")
        #expect(first.parent == base.path + "/tether-\(geteuid())/by-hand")
        #expect(first.path.hasPrefix(first.parent + "/keyboard.") && first.path.count == first.parent.count + 16)
        var info = stat()
        #expect(lstat(first.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(access(first.path + "/" + ByHandTemporaryDirectory.inUse, F_OK) == 0)
        #expect(Self.isHeld(first.path))

        let second = try ByHandTemporaryDirectory.make(base: base.path, prefix: "keyboard")
        #expect(second.path != first.path && Self.isHeld(second.path))
        #expect(access(first.path + "/" + ByHandTemporaryDirectory.inUse, F_OK) == 0, "the first start's was swept")
    }

    /// One nobody holds (its extension was killed) goes at the next start,
    /// with a tree it made unreadable inside; what a link there names stays,
    /// and a link planted in the parent is not followed into.
    @Test func anAbandonedOneGoesAtTheNextStart() throws {
        let base = try TemporaryDirectory("tether-by-hand")
        let live = try ByHandTemporaryDirectory.make(base: base.path, prefix: "widget")
        let outside = base.path + "/outside"
        #expect(mkdir(outside, 0o700) == 0)
        try writeFile(outside + "/keep", "x")
        let dead = live.parent + "/widget.KILLED"
        #expect(mkdir(dead, 0o700) == 0 && mkdir(dead + "/deep", 0o700) == 0)
        try writeFile(dead + "/deep/file", "x")
        #expect(mkfifo(dead + "/fifo", 0o600) == 0 && symlink(outside, dead + "/link") == 0)
        #expect(chmod(dead + "/deep", 0o000) == 0)
        #expect(symlink(outside, live.parent + "/widget.LINKED") == 0)

        let next = try ByHandTemporaryDirectory.make(base: base.path, prefix: "widget")
        #expect(access(dead, F_OK) != 0, "the abandoned one stays")
        #expect(access(live.path + "/" + ByHandTemporaryDirectory.inUse, F_OK) == 0 && Self.isHeld(live.path))
        #expect(Self.isHeld(next.path))
        #expect(access(outside + "/keep", F_OK) == 0)
    }
}
