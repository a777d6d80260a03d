import Foundation
import Testing
import TetherTestSupport

/// An extension started by hand holds its TMPDIR while it lives. One killed
/// with SIGKILL cannot remove its own, so the next start does, and never a
/// live one's.
@Suite(.timed) struct ByHandTemporaryDirectoryTests {
    @Test func aKilledExtensionsTemporaryDirectoryIsRemovedByTheNextStart() throws {
        let group = try TestGroup()
        let base = group.dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let byHand = base + "/tether-\(geteuid())/by-hand"
        func start(_ name: String) throws -> TestProcess {
            let process = try TestProcess(exampleExecutable("example-widget"),
                                          ["--group", group.path, "--name", name, "--entries", "1", "--policy", "never"],
                                          environment: ["TMPDIR": base])
            _ = try process.expectLineStarting("shows: ", timeout: 20)
            return process
        }
        func entries() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: byHand)) ?? []).sorted() }
        let killed = try start("killed")
        let left = try #require(entries().first)
        killed.signal(SIGKILL)
        _ = try killed.waitForExit(timeout: 10)
        #expect(entries() == [left], "a killed one cannot remove its own")
        let live = try start("live")
        defer { live.signal(SIGTERM) }
        let afterLive = entries()
        #expect(afterLive.count == 1 && afterLive.first?.hasPrefix("live.") == true, "\(afterLive)")
        let next = try start("next")
        defer { next.signal(SIGTERM) }
        #expect(entries().count == 2, "a live one's is kept: \(entries())")
    }

    /// A confined keyboard started by hand may remove empty directories in
    /// `by-hand/` (its own TMPDIR, at exit): another live extension's, empty
    /// as far as its code goes, stays out of its reach.
    @Test func aConfinedKeyboardCannotRemoveAnotherLiveOnesTemporaryDirectory() throws {
        let group = try TestGroup()
        let base = group.dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let byHand = base + "/tether-\(geteuid())/by-hand"
        let live = try TestProcess(exampleExecutable("example-widget"),
                                   ["--group", group.path, "--name", "live", "--entries", "1", "--policy", "never"],
                                   environment: ["TMPDIR": base])
        defer { live.signal(SIGTERM) }
        _ = try live.expectLineStarting("shows: ", timeout: 20)
        let liveDirectory = byHand + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: byHand).first))
        let hostile = try TestProcess(exampleExecutable("SDKFixture"), ["rmdir-keyboard", "--group", group.path, "--name", "hostile"],
                                      environment: ["TMPDIR": base])
        defer { hostile.signal(SIGTERM) }
        hostile.writeStdin("rmdir \(liveDirectory)\n")
        let said = try hostile.expectLineStarting("", containing: "rmdir: ", timeout: 20).last ?? ""
        #expect(said.contains("rmdir: refused"), "\(said)")
        #expect(access(liveDirectory, F_OK) == 0, "\(liveDirectory) was removed under its live extension")
        // Its own goes at its exit, and the live one's stays.
        hostile.closeStdin()
        #expect(try hostile.waitForExit(timeout: 10) == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: byHand) == [(liveDirectory as NSString).lastPathComponent])
    }
}
