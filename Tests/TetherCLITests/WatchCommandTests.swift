import Foundation
import Testing
import TetherTestSupport

@Suite(.timed) struct WatchCommandTests {
    @Test func untilRunningTimesOutWithExitOne() throws {
        let group = try TestGroup()
        let result = try group.run(["watch", "feature", "rec", "--until", "running", "--timeout", "0.1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("timed out"))
    }

    @Test func plainWatchPrintsTheStateAndTimesOutWithExitOne() throws {
        let group = try TestGroup()
        let result = try group.run(["watch", "feature", "rec", "--timeout", "0.1"])
        #expect(result.status == 1)
        #expect(result.stdout == "not running\n")
    }

    @Test func untilRunningReturnsWhenAHolderAppears() throws {
        let group = try TestGroup()
        let watcher = try group.start(["watch", "feature", "rec", "--until", "running", "--json", "--timeout", "20"])
        let holder = try group.startHold(["feature", "rec"], ["sh", "-c", "echo ready; exec cat"])
        try holder.expectLine("ready")
        let line = try #require(try watcher.readLine())
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["running"] as? Bool == true)
        #expect(try watcher.waitForExit() == 0)
        holder.closeStdin()
        #expect(try holder.waitForExit() == 0)
    }

    @Test func untilNotRunningReturnsAtOnceWhenNothingHolds() throws {
        let group = try TestGroup()
        let result = try group.run(["watch", "host", "--until", "not-running"])
        #expect(result.status == 0)
        #expect(result.stdout == "not running\n")
    }

    /// Already true: one probe answers (with the holder), no watcher is set up.
    @Test func untilRunningAnswersAtOnceWithTheHolderWhenAlreadyHeld() throws {
        let group = try TestGroup()
        let holder = try group.startHold(["feature", "rec"], ["sh", "-c", "echo ready; exec cat"])
        try holder.expectLine("ready")
        let result = try group.run(["watch", "feature", "rec", "--until", "running", "--json", "--timeout", "20"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["running"] as? Bool == true)
        #expect(object?["pid"] as? Int == Int(holder.pid))
        // Not yet true: it waits for the holder to go.
        let waiter = try group.start(["watch", "feature", "rec", "--until", "not-running", "--timeout", "20"])
        holder.closeStdin()
        #expect(try waiter.readLine() == "not running")
        #expect(try waiter.waitForExit() == 0)
        #expect(try holder.waitForExit() == 0)
    }

    /// The group removed and made again (a reset): a watch still hears a
    /// host start there. It went deaf: its lock file could not be made
    /// again without its directory, and nothing watched for that.
    @Test func aWatchHearsAHostInTheGroupMadeAgain() throws {
        let group = try TestGroup()
        let watcher = try group.start(["watch", "host"])
        defer { _ = try? watcher.stop() }
        #expect(try watcher.readLine() == "not running")
        // Renamed away first: whatever the watcher makes meanwhile is not
        // in the way of the removal.
        #expect(rename(group.path, group.path + ".gone") == 0)
        try FileManager.default.removeItem(atPath: group.path + ".gone")
        try FileManager.default.createDirectory(atPath: group.path, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let holder = try group.startHold(["host"], ["sh", "-c", "echo ready; exec cat"])
        try holder.expectLine("ready")
        #expect(try watcher.readLine() == "running")
        holder.closeStdin()
        #expect(try holder.waitForExit() == 0)
        #expect(try watcher.readLine() == "not running")
    }
}
