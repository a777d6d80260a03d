import Foundation
import Synchronization
import Testing
@testable import TetherGroup
import TetherJSON
import TetherTestSupport

/// Invariant 2's second half: after locking, the holder checks that the path
/// still names the inode it locked. The seam swaps the file at exactly the
/// instant a real race would (between the lock and the check).
@Suite(.timed, .serialized) struct LockReplacementTests {
    /// Replaces the file at `path` once, by renaming a fresh file over it.
    func swapOnce(_ path: String) {
        let swapped = Once()
        LockFaultInjection.setAfterLocking { locked in
            guard locked == path, swapped.first() else { return }
            let fresh = path + ".fresh"
            let fd = open(fresh, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            close(fd)
            rename(fresh, path)
        }
    }

    @Test func livenessLockRetriesOnTheInodeThePathNamesNow() throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedLockPath(for: .feature(FeatureName("rec")))
        swapOnce(path)
        defer { LockFaultInjection.setAfterLocking(nil) }
        let lock = try #require(try LivenessLock.tryAcquire(path: path, label: "swap"))
        // Held on the file the path names: probes of the path see it.
        #expect(try LockProbe.status(ofLockAt: path).running)
        lock.release()
    }

    @Test func exclusiveLockRetriesOnTheInodeThePathNamesNow() throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedStoreLockPath("defaults")
        swapOnce(path)
        defer { LockFaultInjection.setAfterLocking(nil) }
        let lock = try ExclusiveLock.acquire(path: path, timeoutMilliseconds: 1_000)
        // Another taker of the path must find it held.
        #expect(try ExclusiveLock.tryAcquire(path: path) == nil)
        lock.release()
        #expect(try ExclusiveLock.tryAcquire(path: path) != nil)
    }

    /// Another holder replaces the file (it found it only read-locked)
    /// between this one's open and its look: the old file has no link left,
    /// which is no planted hard link; the holder opens the path again.
    /// Seen once in eight contenders on a read-locked host lock (exit 3,
    /// "it has 0 hard links").
    @Test func aFileReplacedBetweenTheOpenAndTheLookIsOpenedAgain() throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedStoreLockPath("defaults")
        let swapped = Once()
        LockFaultInjection.set { moment, opened in
            guard moment == .opened, opened == path, swapped.first() else { return }
            let fresh = path + ".fresh"
            close(open(fresh, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600))
            rename(fresh, path)
        }
        defer { LockFaultInjection.set(nil) }
        let lock = try #require(try ExclusiveLock.tryAcquire(path: path))
        #expect(try ExclusiveLock.tryAcquire(path: path) == nil)
        lock.release()
    }

    /// A reader without the lock (a widget reading defaults) whose store a
    /// writer replaces between the open and the look reads the new store,
    /// not "0 hard links".
    @Test func aStoreReplacedBetweenTheOpenAndTheLookIsReadAgain() throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.group)
        let store = try SharedStore.defaults(in: group)
        try store.set("old", forKey: "k")
        let path = group.storePath("defaults")
        let swapped = Once()
        LockFaultInjection.set { moment, opened in
            guard moment == .opened, opened == path, swapped.first() else { return }
            let fresh = path + ".fresh"
            let fd = open(fresh, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            _ = Array(#"{"k":"new"}"#.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            rename(fresh, path)
        }
        defer { LockFaultInjection.set(nil) }
        // A reader in another process: no cache of this one's.
        let reader = try SharedStore.defaults(in: GroupDirectory(path: dir.group))
        #expect(try reader.values() == ["k": "new"])
    }

    @Test func aStoppedHolderMakesAWaiterGiveUpAtItsDeadline() throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedRefreshLockPath()
        let holder = try #require(try ExclusiveLock.tryAcquire(path: path))
        let started = Date()
        #expect(throws: GroupError.self) { try ExclusiveLock.acquire(path: path, timeoutMilliseconds: 300) }
        #expect(Date().timeIntervalSince(started) < 5)
        holder.release()
        #expect(try ExclusiveLock.acquire(path: path, timeoutMilliseconds: 300).path == path)
    }
}

final class Once: Sendable {
    private let done = Atomic<Bool>(false)
    /// True the first time only.
    func first() -> Bool { !done.exchange(true, ordering: .relaxed) }
}
