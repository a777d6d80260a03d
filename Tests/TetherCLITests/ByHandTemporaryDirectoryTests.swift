import Foundation
import Testing
import TetherTestSupport

/// An extension started by hand holds its TMPDIR while it lives, out of
/// the reach of other extensions started by hand. (The sweep of a killed
/// one's at the next start, and a live one's kept: TetherSandboxTests'
/// `ByHandTemporaryDirectoryTests`, in-process.)
@Suite(.timed) struct ByHandTemporaryDirectoryTests {
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
