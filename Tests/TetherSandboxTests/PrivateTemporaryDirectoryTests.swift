import Foundation
import Glibc
import Synchronization
import Testing
import TetherSandbox
import TetherTestSupport

@Suite(.timed) struct PrivateTemporaryDirectoryTests {
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

    /// A tree far deeper than any descriptor budget (1,000 levels, each with
    /// a file), with read-only and unreadable levels, a FIFO and a symlink out
    /// deep inside: all of it goes, and the symlink's target stays.
    @Test func aTreeOfAnyDepthIsRemoved() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let outside = scratch.path + "/outside"
        try writeFile(outside, "keep")
        let made = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        let top = open(made, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(top >= 0)
        // Made level by level with *at calls: its paths are longer than PATH_MAX.
        var level = top
        for depth in 1...1_000 {
            #expect(mkdirat(level, "d", 0o700) == 0)
            let file = openat(level, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(file >= 0)
            close(file)
            if depth == 500 { #expect(mkfifoat(level, "fifo", 0o600) == 0 && symlinkat(outside, level, "link") == 0) }
            let next = openat(level, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            #expect(next >= 0)
            if depth == 300 { #expect(fchmod(level, 0o500) == 0) }  // read-only: its entries cannot be unlinked as is
            if depth == 700 { #expect(fchmod(level, 0) == 0) }  // unreadable
            if level != top { close(level) }
            level = next
        }
        close(level)
        close(top)
        try PrivateTemporaryDirectory.remove(made)
        #expect(access(made, F_OK) != 0)
        #expect(access(outside, F_OK) == 0)
    }

    /// Names are an extension's to choose, UTF-8 or not: a file and a
    /// directory (with a file in it) named in Latin-1 go with the rest.
    @Test func namesThatAreNotUTF8AreRemoved() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let made = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        let top = open(made, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(top >= 0)
        defer { close(top) }
        let cafe: [CChar] = [0x63, 0x61, 0x66, CChar(bitPattern: 0xE9), 0]  // "café" in Latin-1
        let file = openat(top, cafe, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        #expect(file >= 0)
        close(file)
        let invalid: [CChar] = [CChar(bitPattern: 0xFF), 0]
        #expect(mkdirat(top, invalid, 0o700) == 0)
        let inner = openat(top, invalid, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(inner >= 0)
        let nested = openat(inner, cafe, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        #expect(nested >= 0)
        close(nested)
        close(inner)
        try PrivateTemporaryDirectory.remove(made)
        #expect(access(made, F_OK) != 0)
    }

    /// A writer that never stops (a process of its extension that escaped)
    /// cannot hold a removal forever: it ends after its passes, while the
    /// writer still writes, and what is left stays.
    @Test func aWriterThatNeverStopsCannotHoldTheRemovalForever() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let made = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        let writer = Writer(in: made)
        writer.start()
        defer { writer.stop() }
        try #require(writer.waitForFiles(10), "the writer made no file")
        try? PrivateTemporaryDirectory.remove(made)
        #expect(writer.isWriting, "the removal ended only when its writer stopped (after 30 s)")
    }

    /// At every level of a tree deeper than the descriptor budget, a
    /// symlink to an outside file and one to an outside directory, a FIFO
    /// and a hard link to the outside file, under levels made unreadable:
    /// the tree goes, and nothing outside changes mode or goes.
    @Test func nothingOutsideIsFollowedAtAnyDepth() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let outside = scratch.path + "/outside"
        #expect(mkdir(outside, 0o755) == 0 && mkdir(outside + "/dir", 0o755) == 0)
        try writeFile(outside + "/file", "keep", mode: 0o644)
        try writeFile(outside + "/dir/keep", "keep", mode: 0o644)
        let made = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        var level = open(made, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(level >= 0)
        for depth in 1...40 {
            #expect(symlinkat(outside + "/file", level, "file-link") == 0)
            #expect(symlinkat(outside + "/dir", level, "dir-link") == 0)
            #expect(mkfifoat(level, "fifo", 0o600) == 0)
            #expect(linkat(AT_FDCWD, outside + "/file", level, "hard", 0) == 0)
            #expect(mkdirat(level, "d", 0o700) == 0)
            let next = openat(level, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            #expect(next >= 0)
            if depth % 7 == 0 { #expect(fchmod(level, 0) == 0) }  // unreadable
            close(level)
            level = next
        }
        close(level)
        try PrivateTemporaryDirectory.remove(made)
        #expect(access(made, F_OK) != 0)
        var info = stat()
        #expect(lstat(outside + "/file", &info) == 0 && info.st_mode & 0o7777 == 0o644 && info.st_nlink == 1)
        #expect(lstat(outside + "/dir", &info) == 0 && info.st_mode & 0o7777 == 0o755)
        #expect(access(outside + "/dir/keep", F_OK) == 0)
    }

    @Test func aSymlinkedParentIsRefused() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        #expect(mkdir(scratch.path + "/real", 0o700) == 0)
        #expect(symlink(scratch.path + "/real", scratch.path + "/tmp") == 0)
        #expect(throws: (any Error).self) { try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "w") }
    }

    /// Exactly PREFIX.XXXXXX for each prefix: not `widget.v2`'s, nor a
    /// prefix's own name, and an unreadable one too.
    @Test func leftoversOfThePrefixesAreRemoved() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let parent = scratch.path + "/tmp"
        let a = try PrivateTemporaryDirectory.make(in: parent, prefix: "widget")
        let b = try PrivateTemporaryDirectory.make(in: parent, prefix: "keyboard")
        let c = try PrivateTemporaryDirectory.make(in: parent, prefix: "widget.v2")
        let d = try PrivateTemporaryDirectory.make(in: parent, prefix: ".spare")
        #expect(mkdir(parent + "/widget", 0o700) == 0)
        try writeFile(a + "/secret", "token")
        #expect(mkdir(a + "/locked", 0o700) == 0)
        try writeFile(a + "/locked/secret", "token")
        #expect(chmod(a + "/locked", 0) == 0)
        PrivateTemporaryDirectory.removeLeftovers(in: parent, prefixes: ["widget", ".spare", "w"])
        #expect(access(a, F_OK) != 0)
        #expect(access(d, F_OK) != 0)
        #expect(access(b, F_OK) == 0)
        #expect(access(c, F_OK) == 0)
        #expect(access(parent + "/widget", F_OK) == 0)
    }

    /// A parent whose group is gone is removed with what a killed host left
    /// in it; a live group's stays; a stopped host's empty one goes.
    @Test func parentsOfGroupsThatAreGoneAreRemoved() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let live = scratch.path + "/live-group"
        let gone = scratch.path + "/gone-group"
        #expect(mkdir(live, 0o700) == 0 && mkdir(gone, 0o700) == 0)
        let liveParent = try PrivateTemporaryDirectory.hostParent(group: live, base: scratch.path)
        let goneParent = try PrivateTemporaryDirectory.hostParent(group: gone, base: scratch.path)
        let left = try PrivateTemporaryDirectory.make(in: goneParent, prefix: "widget")
        try writeFile(left + "/secret", "token")
        #expect(rmdir(gone) == 0)
        PrivateTemporaryDirectory.removeOrphans(base: scratch.path)
        #expect(access(goneParent, F_OK) != 0)
        #expect(access(liveParent, F_OK) == 0)
        PrivateTemporaryDirectory.removeHostParentIfEmpty(group: live, base: scratch.path)
        #expect(access(liveParent, F_OK) != 0)
    }

    /// The host's parent is per user and per group, 0700, and refused when
    /// someone else could enter it.
    @Test func theHostsParentIsOursAlone() throws {
        let scratch = try TemporaryDirectory("tether-tmpdir")
        let one = try PrivateTemporaryDirectory.hostParent(group: "/g/one", base: scratch.path)
        let two = try PrivateTemporaryDirectory.hostParent(group: "/g/two", base: scratch.path)
        #expect(one != two && one.hasPrefix(scratch.path + "/tether-\(geteuid())/"))
        var info = stat()
        #expect(lstat(one, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(chmod(scratch.path + "/tether-\(geteuid())", 0o755) == 0)
        #expect(throws: (any Error).self) { try PrivateTemporaryDirectory.hostParent(group: "/g/one", base: scratch.path) }
    }
}

/// Makes files in a directory, one after another, on a thread of its own
/// until stopped or 30 s have passed.
private final class Writer: Sendable {
    private let directory: String
    private let made = Atomic<Int>(0)
    private let writing = Atomic<Bool>(true)
    private let stopping = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init(in directory: String) { self.directory = directory }

    var isWriting: Bool { writing.load(ordering: .acquiring) }

    func start() {
        Thread.detachNewThread { [self] in
            let started = Date()
            var number = 0
            while !stopping.load(ordering: .relaxed), Date().timeIntervalSince(started) < 30 {
                number += 1
                let fd = open("\(directory)/f\(number)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                if fd >= 0 {
                    close(fd)
                    made.add(1, ordering: .relaxed)
                }
            }
            writing.store(false, ordering: .releasing)
            ended.signal()
        }
    }

    /// Whether it made `count` files within 10 s.
    func waitForFiles(_ count: Int) -> Bool {
        let started = Date()
        while made.load(ordering: .relaxed) < count, Date().timeIntervalSince(started) < 10 { usleep(1_000) }
        return made.load(ordering: .relaxed) >= count
    }

    /// Returns once the thread has ended (at most 40 s).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        _ = ended.wait(timeout: .now() + 40)
    }
}
