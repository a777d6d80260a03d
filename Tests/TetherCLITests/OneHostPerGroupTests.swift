import Foundation
import Testing
import TetherTestSupport

/// One host per group, by the kernel: no confined role may rename or
/// unlink the host's lock or socket (Landlock grants none of the group's
/// top level or `locks/`), and should the user rename the lock away, the
/// host's claim on the group directory itself still refuses a second host.
@Suite(.timed)
struct OneHostPerGroupTests {
    @Test func noWidgetMovesTheHostLockAndASecondHostIsRefusedEvenAfterTheUserDoes() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("mover", script: #"""
            mv "$TETHER_GROUP/locks/host.lock" "$TETHER_GROUP/locks/moved" 2>/dev/null || echo "lock: refused"
            rm -f "$TETHER_GROUP/host.sock" 2>/dev/null || echo "socket: refused"
            exec cat
            """#)
        try fixture.withHost { host in
            _ = try host.expectLineStarting("[mover] lock: refused")
            _ = try host.expectLineStarting("[mover] socket: refused")
            #expect(FileManager.default.fileExists(atPath: fixture.group.path + "/locks/host.lock"))
            // The user may: the claim is what is left.
            #expect(rename(fixture.group.path + "/locks/host.lock", fixture.group.path + "/locks/moved") == 0)

            // A probe still finds it running, by its claim.
            let probe = try fixture.group.run(["probe", "host", "--json"])
            #expect(probe.status == 0)
            #expect(try fixture.group.json(probe)["pid"] as? Int == Int(host.pid))
            let second = try fixture.group.run(["host"])
            #expect(second.status == 1)
            #expect(second.stderr.contains("already running (pid \(host.pid))"), "\(second.stderr)")
            // The first host still serves, on its own socket.
            #expect(try fixture.status()["pid"] as? Int == Int(host.pid))
            host.signal(SIGTERM)
            #expect(try host.waitForExit() == 0)
            // Its claim ends with it: the next host starts.
            try fixture.withHost { next in
                let status = try fixture.status()
                #expect(status["pid"] as? Int == Int(next.pid))
            }
        }
    }

    /// A shared lock on the group directory (an extension's child left by
    /// a killed host, here util-linux flock(1)) is no host's: a host starts,
    /// says why it has no claim, and a second is still kept out by the
    /// host lock.
    @Test func aReadLockOnTheGroupDirectoryKeepsNoHostOut() throws {
        let fixture = try HostFixture()
        // The directory first: flock(1) would make a file of that name.
        #expect(mkdir(fixture.group.path, 0o700) == 0 || errno == EEXIST)
        // flock(1) runs its command once it holds the lock: the command's
        // line is the event (a loop over /proc/locks, bounded by count,
        // ran out before a loaded machine started flock).
        let reader = try TestProcess("/usr/bin/flock", ["-s", fixture.group.path, "sh", "-c", "echo locked; exec sleep 120"])
        defer { reader.signal(SIGKILL) }
        _ = try reader.expectLine("locked", timeout: 30)
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        #expect(locks.contains(" READ  \(reader.pid) ") || locks.contains(" READ \(reader.pid) "), "\(locks)")
        try fixture.withHost { host in
            #expect(try fixture.status()["pid"] as? Int == Int(host.pid))
            let second = try fixture.group.run(["host"])
            #expect(second.status == 1)
            #expect(second.stderr.contains("already running (pid \(host.pid))"), "\(second.stderr)")
            #expect(try host.stop() == 0)
            let errors = try host.standardError()
            #expect(errors.contains("the group directory is read-locked by pid \(reader.pid)"), "\(errors)")
        }
    }
}
