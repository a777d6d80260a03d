import Foundation
import Synchronization
import Testing
@testable import TetherGroup
import TetherTestSupport

@Suite(.timed) struct LivenessLockTests {
    func lockPath(_ dir: TemporaryDirectory, _ name: String = "rec") throws -> String {
        try GroupDirectory(path: dir.group).preparedLockPath(for: .feature(FeatureName(name)))
    }

    @Test func heldLockReadsRunningWithHolderInfoUntilReleased() throws {
        let dir = try TemporaryDirectory()
        let path = try lockPath(dir)
        #expect(try LockProbe.status(ofLockAt: path) == .notRunning)
        // Probing a lock nobody ever held does not create its file.
        #expect(!FileManager.default.fileExists(atPath: path))

        let lock = try #require(try LivenessLock.tryAcquire(path: path, label: "feature rec"))
        let status = try LockProbe.status(ofLockAt: path)
        #expect(status.running)
        #expect(status.holder?.pid == getpid())
        #expect(status.holder?.label == "feature rec")
        #expect(status.holder?.since == lock.holder.since)

        #expect(try LivenessLock.tryAcquire(path: path, label: "second") == nil)

        lock.release()
        #expect(try LockProbe.status(ofLockAt: path) == .notRunning)
        // Invariant 2: the lock file outlives every holder.
        #expect(FileManager.default.fileExists(atPath: path))
        let again = try #require(try LivenessLock.tryAcquire(path: path, label: "again"))
        again.release()
    }

    /// A record blanked rather than truncated (the host's release of its
    /// extensions' instance locks) names no holder, even to a probe that
    /// finds the lock held again before its new holder wrote; the next
    /// holder's shorter record replaces it whole.
    @Test func aBlankedRecordNamesNoHolderAndTheNextHolderReplacesIt() throws {
        let dir = try TemporaryDirectory()
        let path = try lockPath(dir)
        let long = try #require(try LivenessLock.tryAcquire(path: path, label: String(repeating: "l", count: 200)))
        long.release(truncating: false)
        let left = try String(contentsOfFile: path, encoding: .utf8)
        #expect(left.hasPrefix("pid=0\n"))
        #expect(left.count > 200, "its block is kept")
        #expect(HolderInfo(parsing: Array(left.utf8)) == nil)
        #expect(try LockProbe.status(ofLockAt: path) == .notRunning)
        let short = try #require(try LivenessLock.tryAcquire(path: path, label: "s"))
        #expect(try LockProbe.status(ofLockAt: path).holder?.label == "s")
        #expect(try String(contentsOfFile: path, encoding: .utf8).count < left.count)
        short.release()
        // A clean release clears it.
        #expect(try String(contentsOfFile: path, encoding: .utf8).isEmpty)
    }

    @Test func keptProbeAgreesWithFreshProbe() throws {
        let dir = try TemporaryDirectory()
        let path = try lockPath(dir)
        let kept = try LockProbe(path: path)
        #expect(try !kept.status().running)
        let lock = try #require(try LivenessLock.tryAcquire(path: path, label: "x"))
        #expect(try kept.status().running)
        #expect(try kept.status(identifyHolder: true).holder?.pid == getpid())
        lock.release()
        #expect(try !kept.status().running)
        // The kept probe's own brief shared flock must not block a holder.
        let next = try #require(try LivenessLock.tryAcquire(path: path, label: "y"))
        next.release()
    }

    /// Invariant 3: probes never make an acquisition fail. Four threads probe
    /// in a tight loop (fresh and kept descriptors) while a holder takes and
    /// releases the lock 1,000 times.
    @Test func probeStormNeverStarvesAHolder() throws {
        let dir = try TemporaryDirectory()
        let path = try lockPath(dir)
        let stop = Flag()
        let probes = Flag.Counter()
        let threads = (0..<4).map { index in
            Thread {
                let kept = index % 2 == 1 ? try? LockProbe(path: path) : nil
                while !stop.isSet {
                    if let kept { _ = try? kept.status() } else { _ = try? LockProbe.status(ofLockAt: path) }
                    probes.increment()
                }
                stop.threadDone()
            }
        }
        threads.forEach { $0.start() }
        var failures = 0
        for _ in 0..<1_000 {
            if let lock = try LivenessLock.tryAcquire(path: path, label: "storm") { lock.release() } else { failures += 1 }
        }
        stop.set()
        stop.waitForThreads(4)
        #expect(failures == 0)
        #expect(probes.value > 1_000, "the probers did run")
    }

    @Test func symlinkInPlaceOfALockFileIsRefusedAndNothingIsWrittenThrough() throws {
        let dir = try TemporaryDirectory()
        let path = try lockPath(dir)
        let target = dir.path + "/precious"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        #expect(throws: GroupError.symlinkRefused(path)) { try LivenessLock.tryAcquire(path: path, label: "x") }
        #expect(throws: GroupError.symlinkRefused(path)) { try LockProbe.status(ofLockAt: path) }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
    }

    /// Invariant 13: a hard link planted at a lock path is refused like a
    /// symlink, by a holder and a probe, and the linked file is never written.
    @Test func aHardLinkInPlaceOfALockFileIsRefusedAndNothingIsWrittenThrough() throws {
        let dir = try TemporaryDirectory()
        let path = try lockPath(dir)
        let precious = dir.path + "/precious"
        try writeFile(precious, "keep me", mode: 0o600)
        try #require(link(precious, path) == 0)
        #expect(throws: GroupError.hardLinkRefused(path, links: 2)) { try LivenessLock.tryAcquire(path: path, label: "x") }
        #expect(throws: GroupError.hardLinkRefused(path, links: 2)) { try LockProbe.status(ofLockAt: path) }
        #expect(GroupError.hardLinkRefused(path, links: 2).description.contains("hard links"))
        #expect(!GroupError.hardLinkRefused(path, links: 2).isBadInput, "the CLI's exit 3, not a usage error")
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "keep me")
    }
}

/// A stop flag and a thread-completion count for the storm test.
final class Flag: Sendable {
    private let state = Mutex<(set: Bool, done: Int)>((false, 0))
    private let condition = NSCondition()

    var isSet: Bool { state.withLock { $0.set } }
    func set() { state.withLock { $0.set = true } }

    func threadDone() {
        condition.lock()
        state.withLock { $0.done += 1 }
        condition.broadcast()
        condition.unlock()
    }

    func waitForThreads(_ count: Int) {
        condition.lock()
        while state.withLock({ $0.done }) < count {
            _ = condition.wait(until: TestTimeout.deadline(after: 1))
        }
        condition.unlock()
    }

    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func increment() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }
}
