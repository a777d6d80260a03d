import Foundation
import Testing
import TetherGroup
import TetherTestSupport

/// Invariant 13 for files written without a lock (`shared/`): a write removes
/// the temp files of writers that are gone, and never a live writer's.
@Suite(.timed) struct AtomicFileTests {
    /// A temp file no writer holds goes once a few seconds old, whatever
    /// its pid; one its writer holds (its lock, from creation to rename)
    /// stays however old, whatever its pid says: a writer stopped with
    /// SIGSTOP, or in another PID namespace (an extension's world).
    @Test func aWriteSweepsTheTempFilesNoWriterHolds() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/note"
        let dead = dir.path + "/.note.\(pidOfNoProcess).0.tmp"
        let young = dir.path + "/.note.\(pidOfNoProcess).1.tmp"
        let held = dir.path + "/.note.\(pidOfNoProcess).2.tmp"
        let ownPID = dir.path + "/.note.\(getpid()).3.tmp"  // no thread of ours holds it
        let worldInit = dir.path + "/.note.1.0.tmp"  // pid 1 in an extension's world
        let unrelated = dir.path + "/.note.backup.tmp"
        for leftover in [dead, young, held, ownPID, worldInit, unrelated] { try writeFile(leftover, "secret copy", mode: 0o600) }
        // Last written two minutes ago.
        var times = [timespec(tv_sec: time(nil) - 120, tv_nsec: 0), timespec(tv_sec: time(nil) - 120, tv_nsec: 0)]
        for old in [dead, held, ownPID, worldInit, unrelated] { try #require(utimensat(AT_FDCWD, old, &times, 0) == 0) }
        // A live writer's lock, as `write` takes it (F_OFD_SETLK).
        let writer = open(held, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        try #require(fcntl(writer, 37, &lock) == 0)  // F_OFD_SETLK
        try AtomicFile.write(Array("new".utf8), to: path)
        for gone in [dead, ownPID, worldInit] {
            #expect(!FileManager.default.fileExists(atPath: gone), "\(gone): no writer holds it")
        }
        #expect(FileManager.default.fileExists(atPath: young), "a file made a moment ago is kept")
        #expect(FileManager.default.fileExists(atPath: held), "a held file is a live writer's")
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
