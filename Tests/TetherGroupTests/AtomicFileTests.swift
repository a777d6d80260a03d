import Foundation
import Testing
import TetherGroup
import TetherTestSupport

/// Invariant 13 for files written without a lock (`shared/`): a write removes
/// the temp files of writers that are gone, and never a live writer's.
@Suite(.timed) struct AtomicFileTests {
    /// A dead writer's temp file goes once it is old; a young one whose pid
    /// names no process here is kept: its writer may be in another PID
    /// namespace (an extension's world), writing now.
    @Test func aWriteSweepsDeadWritersTempFilesAndKeepsLiveOnes() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/note"
        let dead = dir.path + "/.note.\(pidOfNoProcess).0.tmp"
        let elsewhere = dir.path + "/.note.\(pidOfNoProcess).1.tmp"
        let live = dir.path + "/.note.\(getppid()).0.tmp"  // our parent lives on
        let unrelated = dir.path + "/.note.backup.tmp"
        for leftover in [dead, elsewhere, live, unrelated] { try writeFile(leftover, "secret copy", mode: 0o600) }
        // Last written two minutes ago, past `abandonedAfterSeconds`.
        var times = [timespec(tv_sec: time(nil) - 120, tv_nsec: 0), timespec(tv_sec: time(nil) - 120, tv_nsec: 0)]
        for old in [dead, live] { try #require(utimensat(AT_FDCWD, old, &times, 0) == 0) }
        try AtomicFile.write(Array("new".utf8), to: path)
        #expect(!FileManager.default.fileExists(atPath: dead), "a dead writer's copy is removed")
        #expect(FileManager.default.fileExists(atPath: elsewhere), "a young file of a pid unknown here is kept")
        #expect(FileManager.default.fileExists(atPath: live), "a live writer's temp file is its own")
        #expect(FileManager.default.fileExists(atPath: unrelated), "only exact temp names are touched")
        #expect(try AtomicFile.read(path) == Array("new".utf8))
    }

    /// A FIFO planted where a file is read (an extension may make one in
    /// `shared/`): refused at once as no regular file, never waited on, so
    /// no reader's loop freezes until someone writes.
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() async throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.path + "/planted"
        try #require(mkfifo(fifo, 0o600) == 0)
        let outcome = try await blockingCall(within: 5, release: { close(open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) }) {
            Result { () throws(GroupError) in try AtomicFile.read(fifo) }
        }
        let result = try #require(outcome, "the read waited for a writer of the FIFO")
        #expect(throws: GroupError.notARegularFile(fifo)) { try result.get() }
    }
}
