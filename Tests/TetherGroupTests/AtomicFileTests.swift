import Foundation
import Testing
import TetherGroup
import TetherTestSupport

/// Invariant 13 for files written without a lock (`shared/`): a write removes
/// the temp files of writers that are gone, and never a live writer's.
@Suite(.timed) struct AtomicFileTests {
    @Test func aWriteSweepsDeadWritersTempFilesAndKeepsLiveOnes() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/note"
        let dead = dir.path + "/.note.\(pidOfNoProcess).0.tmp"
        let live = dir.path + "/.note.\(getppid()).0.tmp"  // our parent lives on
        let unrelated = dir.path + "/.note.backup.tmp"
        for leftover in [dead, live, unrelated] { try writeFile(leftover, "secret copy", mode: 0o600) }
        try AtomicFile.write(Array("new".utf8), to: path)
        #expect(!FileManager.default.fileExists(atPath: dead), "a dead writer's copy is removed")
        #expect(FileManager.default.fileExists(atPath: live), "a live writer's temp file is its own")
        #expect(FileManager.default.fileExists(atPath: unrelated), "only exact temp names are touched")
        #expect(try AtomicFile.read(path) == Array("new".utf8))
    }
}
