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

    /// The lock file unlinked (an `rm -rf` of the group under way) is not
    /// made again by a watcher, which waits for a holder to make it: it made
    /// it again at once, and the removal failed (directory not empty).
    @Test func aWatchDoesNotMakeAnUnlinkedLockFileAgain() throws {
        let group = try TestGroup()
        let watcher = try group.start(["watch", "host"])
        defer { _ = try? watcher.stop() }
        #expect(try watcher.readLine() == "not running")
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        defer { close(inotify) }
        #expect(inotify_add_watch(inotify, group.path + "/locks", UInt32(IN_CREATE)) >= 0)
        #expect(unlink(group.hostLock) == 0)
        // Bounded: the watcher answered its file's unlinking within
        // milliseconds when it made it again.
        var created = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
        #expect(poll(&created, 1, 2_000) == 0, "the watcher made host.lock again")
        let holder = try group.startHold(["host"], ["sh", "-c", "echo ready; exec cat"])
        try holder.expectLine("ready")
        #expect(try watcher.readLine() == "running", "it hears the holder that made it")
        holder.closeStdin()
        #expect(try holder.waitForExit() == 0)
        #expect(try watcher.readLine() == "not running")
    }
}
