import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherGroup
import TetherTestSupport

@Suite(.timed) struct TallyFileTests {
    @Test func eachAddIsOneAndTheCountIsTheirNumber() throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.path + "/group")
        let tally = try TallyFile(group: group, name: "refresh-refreshed")
        #expect(tally.count() == 0)
        for _ in 0..<3 { #expect(tally.add()) }
        #expect(tally.count() == 3)
        #expect(try TallyFile(group: group, name: "refresh-refreshed").count() == 3, "another process reads the same")
    }

    /// A symlink or a hard link where the tally should be is refused, as
    /// for lock and store files: nothing is written through it, and its
    /// count is unknown (nil), not 0.
    @Test func linksAreRefused() throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.path + "/group")
        let target = dir.path + "/elsewhere"
        try writeFile(target, "x")
        let viaSymlink = try TallyFile(group: group, name: "a")
        #expect(symlink(target, viaSymlink.path) == 0)
        #expect(!viaSymlink.add())
        #expect(viaSymlink.count() == nil)
        let viaHardLink = try TallyFile(group: group, name: "b")
        #expect(link(target, viaHardLink.path) == 0)
        #expect(!viaHardLink.add())
        #expect(viaHardLink.count() == nil)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "x")
    }

    /// A FIFO where the tally should be is not written, and not waited on
    /// for a reader: a count is never worth a frozen loop.
    @Test func aFIFOIsNotWaitedOn() async throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.path + "/group")
        let tally = try TallyFile(group: group, name: "a")
        try #require(mkfifo(tally.path, 0o600) == 0)
        let path = tally.path
        let added = try await blockingCall(within: 5, release: { close(open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) }) { tally.add() }
        #expect(added == false, "waited for a reader of the FIFO, or wrote into it")
        #expect(tally.count() == nil)
    }
}
