#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// What a launch's TMPDIR holds against its limit, heard through inotify
/// and counted off the loop (no host, no process): real files in a
/// temporary directory, the watcher on a loop of the test's.
@Suite(.timed) struct DiskUsageWatcherTests {
    static let mebibyte = 1 << 20

    /// Keeps the test's watcher (its callbacks do not: nothing holds itself)
    /// until `onLoop` has returned, its loop joined and its handles closed.
    final class Keeper: @unchecked Sendable {  // set on the loop, let go after it is joined
        var watcher: DiskUsageWatcher?
    }

    /// Past its bytes by a file in a directory made after the watch began,
    /// written once the watcher has counted what was there (so only a watch
    /// of that directory hears it): told once, however much more is
    /// written (three counts' time later).
    @Test func aTreePastItsLimitIsToldOnce() async throws {
        let directory = try TemporaryDirectory("tether-disk")
        let root = directory.path
        let keeper = Keeper()
        defer { keeper.watcher = nil }
        let told: Int = try await onLoop { loop, finish in
            let watcher = try DiskUsageWatcher(loop: loop)
            keeper.watcher = watcher
            var times = 0
            let later = LoopTimer(loop: loop)
            let tree = try watcher.watch(root, limitBytes: Int64(Self.mebibyte), maximumEntries: 100) {
                times += 1
                try? writeFile(root + "/more", String(repeating: "x", count: Self.mebibyte))
                later.start(afterMilliseconds: 3 * DiskUsageWatcher.countIntervalMilliseconds) {
                    finish(times)
                }
            }
            #expect(mkdir(root + "/sub", 0o700) == 0)
            try writeFile(root + "/a", String(repeating: "x", count: Self.mebibyte / 2))
            // Bounded by the test's loop (10 s): the count that found `a`.
            let counted = LoopTimer(loop: loop)
            counted.start(afterMilliseconds: 20, repeatMilliseconds: 20) { [unowned watcher] in
                guard watcher.bytes(of: tree) >= Int64(Self.mebibyte / 2) else { return }
                counted.close()
                try? writeFile(root + "/sub/b", String(repeating: "x", count: Self.mebibyte / 2 + 1))
            }
        }
        #expect(told == 1)
        withExtendedLifetime(directory) {}
    }

    /// A directory made and removed before the host looks (`mktemp -d` and
    /// its cleanup) is no reason to end the extension: gone, it holds nothing.
    @Test func aDirectoryGoneBeforeItIsWatchedIsNoReasonToEnd() async throws {
        let directory = try TemporaryDirectory("tether-disk")
        let root = directory.path
        let keeper = Keeper()
        defer { keeper.watcher = nil }
        let outcome: String = try await onLoop { loop, finish in
            let watcher = try DiskUsageWatcher(loop: loop)
            keeper.watcher = watcher
            _ = try watcher.watch(root, limitBytes: Int64(Self.mebibyte), maximumEntries: 100) { finish("ended") }
            // On the loop, so its events wait: each directory is gone when heard of.
            for index in 0..<8 {
                #expect(mkdir(root + "/made-\(index)", 0o700) == 0 && rmdir(root + "/made-\(index)") == 0)
            }
            let later = LoopTimer(loop: loop)
            later.start(afterMilliseconds: 4 * DiskUsageWatcher.countIntervalMilliseconds) { finish("kept") }
        }
        #expect(outcome == "kept")
        withExtendedLifetime(directory) {}
    }

    /// Whether a tree of at most `entries` entries and a MiB is told it is
    /// past its limit once `write` has written in it (within the loop's 10 s).
    func isToldPastTheLimit(entries: Int, after write: @escaping (String) throws -> Void) async throws -> Bool {
        let directory = try TemporaryDirectory("tether-disk")
        let root = directory.path
        let keeper = Keeper()
        defer { keeper.watcher = nil }
        let told: Bool = try await onLoop { loop, finish in
            let watcher = try DiskUsageWatcher(loop: loop)
            keeper.watcher = watcher
            _ = try watcher.watch(root, limitBytes: Int64(Self.mebibyte), maximumEntries: entries) { finish(true) }
            try write(root)
        }
        withExtendedLifetime(directory) {}
        return told
    }

    /// More entries than it may hold is past the limit too, however small
    /// they are: each count stops there, so its cost is bounded.
    @Test func tooManyEntriesArePastTheLimit() async throws {
        let told = try await isToldPastTheLimit(entries: 10) { root in
            for index in 0...10 { try writeFile(root + "/empty-\(index)", "") }
        }
        #expect(told)
    }

    /// A sparse file counts whole: its size, not the few blocks it holds.
    @Test func aSparseFileCountsItsSize() async throws {
        let told = try await isToldPastTheLimit(entries: 100) { root in
            let fd = open(root + "/sparse", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            defer { close(fd) }
            #expect(fd >= 0 && ftruncate(fd, off_t(4 * Self.mebibyte)) == 0)
        }
        #expect(told)
    }

    /// A tree counted on (the group's shared parts) is told each count, so
    /// its caller sees it shrink as well as grow.
    @Test func aTreeCountedOnIsToldItShrinks() async throws {
        let directory = try TemporaryDirectory("tether-disk")
        let root = directory.path
        let keeper = Keeper()
        defer { keeper.watcher = nil }
        let seen: [Int64] = try await onLoop { loop, finish in
            let watcher = try DiskUsageWatcher(loop: loop)
            keeper.watcher = watcher
            var seen: [Int64] = []
            _ = try watcher.watch(root, limitBytes: Int64(Self.mebibyte), maximumEntries: 100) { bytes, crowded in
                #expect(!crowded)
                seen.append(bytes)
                if bytes >= 300_000 {
                    #expect(unlink(root + "/f") == 0)
                } else if seen.contains(where: { $0 >= 300_000 }) {
                    finish(seen)
                } else if seen.count == 1 {
                    try? writeFile(root + "/f", String(repeating: "x", count: 300_000))
                }
            }
        }
        #expect(seen.first == 0 && seen.last == 0 && seen.contains { $0 >= 300_000 }, "\(seen)")
        withExtendedLifetime(directory) {}
    }
}
