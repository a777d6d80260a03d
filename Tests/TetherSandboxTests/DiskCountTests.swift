import CTetherSystem
import Foundation
import Synchronization
import Testing
import TetherSandbox
import TetherTestSupport

/// What the host counts of a launch's temporary directory, which its
/// extension writes, names and changes while it is counted.
@Suite(.timed) struct DiskCountTests {
    /// `relative` (bytes, "/" between names) under `directory`, as a C path.
    static func path(_ directory: String, _ relative: [UInt8]) -> [CChar] {
        Array(directory.utf8CString.dropLast()) + [CChar(UInt8(ascii: "/"))] + relative.map { CChar(bitPattern: $0) } + [0]
    }

    /// A file of `size` bytes (sparse: it counts whole) at `path`.
    static func makeFile(_ path: [CChar], size: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0, "open: errno \(errno)")
        defer { close(fd) }
        try #require(ftruncate(fd, off_t(size)) == 0)
    }

    /// Names are the extension's to choose: a file named in Latin-1 and
    /// one in a directory whose name is not UTF-8 are counted, and that
    /// directory is said to have no path (the host cannot watch it).
    @Test func namesThatAreNotUTF8AreCounted() throws {
        let root = try TemporaryDirectory("tether-disk-count")
        let cafe: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in Latin-1
        try Self.makeFile(Self.path(root.path, cafe), size: 65_536)
        #expect(mkdir(Self.path(root.path, [0xFF]), 0o700) == 0)
        try Self.makeFile(Self.path(root.path, [0xFF, UInt8(ascii: "/")] + cafe), size: 65_536)
        #expect(mkdir(root.path + "/plain", 0o700) == 0)
        let count = DiskCount.walk(root.path, maximumDirectories: 16, maximumEntries: 100)
        #expect(count.bytes == 131_072)
        #expect(count.entries == 4)
        #expect(count.unseen == 1)
        #expect(count.directories == [root.path + "/plain"])
    }

    /// A directory its extension made unreadable (0000) or unsearchable
    /// (0600), or the root itself (0300), cannot be counted: it is said
    /// unseen (the host then ends the extension), unless whoever counts
    /// reads it anyway (root; the VM tier runs this as nobody).
    @Test func aDirectoryMadeUnreadableIsUnseen() throws {
        let root = try TemporaryDirectory("tether-disk-count")
        for (name, mode) in [("locked", mode_t(0)), ("listed", mode_t(0o600))] {
            let directory = root.path + "/" + name
            #expect(mkdir(directory, 0o700) == 0)
            try Self.makeFile(Array((directory + "/data").utf8CString), size: 65_536)
            #expect(chmod(directory, mode) == 0)
        }
        defer { for name in ["locked", "listed"] { chmod(root.path + "/" + name, 0o700) } }
        let count = DiskCount.walk(root.path, maximumDirectories: 16, maximumEntries: 100)
        #expect(chmod(root.path, 0o300) == 0)
        let ofTheRoot = DiskCount.walk(root.path, maximumDirectories: 16, maximumEntries: 100)
        #expect(chmod(root.path, 0o700) == 0)
        if geteuid() == 0 {
            #expect(count.unseen == 0 && count.bytes == 131_072)
            #expect(ofTheRoot.unseen == 0 && ofTheRoot.bytes == 131_072)
        } else {
            #expect(count.unseen == 2, "the unreadable directory and the unsearchable one")
            #expect(ofTheRoot.unseen == 1)
        }
    }

    /// A directory on the way swapped for a symlink while the tree is
    /// walked (its extension racing the host's count) leads nowhere: what
    /// the symlink names, outside the tree, is never counted.
    @Test func aSymlinkSwappedInOnTheWayIsNeverFollowed() throws {
        let scratch = try TemporaryDirectory("tether-disk-count")
        let root = scratch.path + "/root", outside = scratch.path + "/outside"
        for directory in [root, root + "/a", root + "/a/b", outside, outside + "/b"] {
            try #require(mkdir(directory, 0o700) == 0)
        }
        try Self.makeFile(Array((root + "/a/b/small").utf8CString), size: 1)
        try Self.makeFile(Array((outside + "/b/big").utf8CString), size: 1 << 30)
        try #require(symlink(outside, scratch.path + "/link") == 0)
        // The extension: `a` and the symlink trade places, again and again.
        let swapping = Swapper(scratch.path + "/root/a", scratch.path + "/link")
        swapping.start()
        defer { swapping.stop() }
        var walks = 0, followed = 0, descended = 0
        let started = Date()
        while walks < 2_000, Date().timeIntervalSince(started) < 10 {
            let count = DiskCount.walk(root, maximumDirectories: 16, maximumEntries: 100)
            if count.bytes >= 1 << 30 { followed += 1 }
            if count.directories.count == 2 { descended += 1 }
            walks += 1
        }
        #expect(followed == 0, "\(followed) of \(walks) counts followed the symlink swapped in")
        #expect(swapping.swaps > 0 && descended > 0, "the race never ran: \(swapping.swaps) swaps, \(descended) walks below a")
    }
}

/// Swaps two names (RENAME_EXCHANGE) on a thread of its own until stopped.
private final class Swapper: Sendable {
    private let first: String, second: String
    private let stopping = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)
    private let ended = DispatchSemaphore(value: 0)

    init(_ first: String, _ second: String) {
        self.first = first
        self.second = second
    }

    var swaps: Int { count.load(ordering: .relaxed) }

    func start() {
        Thread.detachNewThread { [self] in
            // Bounded whatever happens to the test: 10 million tries.
            var tries = 0
            while tries < 10_000_000, !stopping.load(ordering: .relaxed) {
                tries += 1
                if tether_renameat2(AT_FDCWD, first, AT_FDCWD, second, TETHER_RENAME_EXCHANGE) == 0 {
                    count.add(1, ordering: .relaxed)
                }
            }
            ended.signal()
        }
    }

    /// Returns once the thread has ended (at most 10 s).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        _ = ended.wait(timeout: .now() + 10)
    }
}
