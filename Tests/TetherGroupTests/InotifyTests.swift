import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherGroup
import TetherLoop
import TetherTestSupport

/// One inotify instance per loop, shared by every watch on it (issue 43):
/// the user has 128 instances in all, and a thousand widgets must fit.
@Suite(.timed) struct InotifyTests {
    /// The inotify descriptors of this process that watch `inode`: read
    /// from each one's fdinfo ("inotify wd:1 ino:HEX sdev:..."), so other
    /// tests' instances running meanwhile do not count.
    static func instances(watching inode: UInt64) -> Set<String> {
        let wanted = "ino:" + String(inode, radix: 16) + " "
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(fds.filter { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == "anon_inode:inotify"
                && ((try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)) ?? "").contains(wanted)
        })
    }

    static func inode(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    @Test func everyWatchOnALoopSharesOneInstanceClosedWithTheLast() async throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.group)
        let lock = try group.preparedLockPath(for: .feature(FeatureName("shared")))
        let stores = dir.path + "/stores"
        let other = dir.path + "/other"
        for directory in [stores, other] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let (open, closed): ([Set<String>], [Set<String>]) = try await onLoop { loop, finish in
            let watcher = try LockWatcher(loop: loop, path: lock) { _ in }
            // The watcher makes the lock file.
            let inodes = [Self.inode(lock), Self.inode(stores), Self.inode(other)]
            let first = try StoreWatcher(loop: loop, paths: [stores + "/defaults.json"]) { _ in }
            let second = try StoreWatcher(loop: loop, paths: [other + "/credentials.json"]) { _ in }
            let open = inodes.map(Self.instances(watching:))
            watcher.close()
            first.close()
            second.close()
            finish((open, inodes.map(Self.instances(watching:))))
        }
        #expect(open.allSatisfy { $0.count == 1 }, "\(open)")
        #expect(Set(open.flatMap { $0 }).count == 1, "one instance watches all three: \(open)")
        #expect(closed.allSatisfy { $0.isEmpty }, "closed with the last watch: \(closed)")
    }

    /// Two users of one directory: each hears what it asked for, and one
    /// closing leaves the other's watch in place.
    @Test func usersOfOneDirectoryKeepTheirOwnEvents() async throws {
        let dir = try TemporaryDirectory()
        let stores = dir.path + "/stores"
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        let heard: [String] = try await onLoop { loop, finish in
            var heard: [String] = []
            let leaving = try StoreWatcher(loop: loop, paths: [stores + "/a.json"]) { heard.append("leaving " + $0) }
            var staying: StoreWatcher?
            staying = try StoreWatcher(loop: loop, paths: [stores + "/b.json"]) { path in
                heard.append("staying " + path)
                staying?.close()
                finish(heard)
            }
            leaving.close()
            try Data("{}".utf8).write(to: URL(fileURLWithPath: stores + "/a.json"))
            try Data("{}".utf8).write(to: URL(fileURLWithPath: stores + "/b.json"))
        }
        #expect(heard == ["staying \(stores)/b.json"])
    }

    /// A watched directory removed: the kernel drops its watch (IN_IGNORED)
    /// and so does its user. Before, the user's table kept every such
    /// watch, so a loop of mkdir and rmdir under a watched tree (the disk
    /// usage of a launch's TMPDIR, the group's shared/) grew the host for
    /// good. Two users of the one directory both let it go.
    @Test func aWatchTheKernelDroppedIsForgottenByEveryUser() async throws {
        let dir = try TemporaryDirectory()
        let counts: [Int] = try await onLoop { loop, finish in
            let first = try Inotify(loop: loop)
            let second = try Inotify(loop: loop)
            var kept: [Int] = []
            for round in 0..<20 {
                let doomed = dir.path + "/doomed-\(round)"
                try FileManager.default.createDirectory(atPath: doomed, withIntermediateDirectories: false)
                try first.watch(doomed, mask: UInt32(IN_CREATE))
                try second.watch(doomed, mask: UInt32(IN_DELETE_SELF))
                try FileManager.default.removeItem(atPath: doomed)
            }
            var ignored = 0
            let done = { kept = [first.watchCount, second.watchCount]; first.close(); second.close(); finish(kept) }
            try first.start { events in
                ignored += events.filter { $0.mask & UInt32(IN_IGNORED) != 0 }.count
                if ignored == 20 { done() }
            }
            try second.start { _ in }
        }
        #expect(counts == [0, 0], "watches kept after their directories went: \(counts)")
    }

    /// How many events the kernel queues on an inotify instance.
    static let queueLimit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384

    /// More events than the kernel queues, in `directory`: two files
    /// written in turn (inotify merges an event only with the one before).
    static func flood(_ directory: String) throws {
        for name in ["flood-a", "flood-b"] { try writeFile(directory + "/" + name, "") }
        for index in 0..<(queueLimit + 100) {
            let fd = open(directory + (index % 2 == 0 ? "/flood-a" : "/flood-b"), O_WRONLY | O_CLOEXEC)
            try #require(fd >= 0)
            close(fd)
        }
    }

    /// More changes than the kernel queues while the loop is busy (anyone
    /// who may write a directory watched on the loop can make them): the
    /// queue overflows and a store's own change is lost in it, so the
    /// watcher looks: the store whose file is another is reported, and
    /// only it (each report has the host tell every widget).
    @Test(.enabled(if: queueLimit <= 1 << 16, "too many events to make"))
    func afterAnOverflowTheStoreThatChangedIsReportedAndOnlyIt() async throws {
        let dir = try TemporaryDirectory()
        let stores = dir.path + "/stores"
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        for name in ["a.json", "b.json"] { try replaceFile(stores + "/" + name, "{}") }
        let heard: [String] = try await onLoop(timeoutMilliseconds: 30_000) { loop, finish in
            var heard: [String] = []
            var watcher: StoreWatcher?
            let settle = LoopTimer(loop: loop)
            watcher = try StoreWatcher(loop: loop, paths: [stores + "/a.json", stores + "/b.json"]) { path in
                heard.append(path)
                guard heard.count == 1 else { return }
                // Whatever else this overflow reports comes in the same turn.
                settle.start(afterMilliseconds: 100) {
                    settle.close()
                    watcher?.close()
                    finish(heard)
                }
            }
            // The loop reads nothing until this returns: the kernel queues it all.
            try Self.flood(stores)
            try replaceFile(stores + "/b.json", #"{"changed":true}"#)
        }
        #expect(heard == [stores + "/b.json"])
    }

    /// A store's directory removed, then made again while the loop was busy
    /// and the queue overflowed with another user's events (an extension
    /// writing in a tree the host watches): the event that would have said
    /// the directory is back is lost, and the overflow stands for it: the
    /// store is reported, and watched again (it went deaf for good).
    @Test(.enabled(if: queueLimit <= 1 << 16, "too many events to make"))
    func aStoreDirectoryMadeAgainIsFoundPastAnOverflow() async throws {
        let dir = try TemporaryDirectory()
        let stores = dir.path + "/stores", flooded = dir.path + "/flooded"
        for path in [stores, flooded] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        try replaceFile(stores + "/a.json", "{}")
        let heard: [Bool] = try await onLoop(timeoutMilliseconds: 30_000) { loop, finish in
            var heard: [Bool] = []
            let other = try Inotify(loop: loop)
            try other.watch(flooded, mask: UInt32(IN_OPEN | IN_CLOSE_WRITE))
            try other.start { _ in }
            var watcher: StoreWatcher?
            let next = LoopTimer(loop: loop)
            watcher = try StoreWatcher(loop: loop, paths: [stores + "/a.json"]) { path in
                heard.append(FileManager.default.fileExists(atPath: path))
                if heard.count == 3 {
                    watcher?.close()
                    other.close()
                    next.close()
                    return finish(heard)
                }
                if heard.count == 2 {
                    // Found by looking: a change from now on is heard.
                    return (try? replaceFile(stores + "/a.json", #"{"later":true}"#)) ?? finish([])
                }
                // Its removal heard (and the directory with it, in the same
                // read): made again behind the flood, in one busy turn.
                next.start(afterMilliseconds: 0) {
                    do {
                        try Self.flood(flooded)
                        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: false)
                        try replaceFile(stores + "/a.json", #"{"again":true}"#)
                    } catch {
                        finish([])
                    }
                }
            }
            // The loop reads nothing until this returns: one batch.
            try FileManager.default.removeItem(atPath: stores)
        }
        #expect(heard == [false, true, true])
    }
}
