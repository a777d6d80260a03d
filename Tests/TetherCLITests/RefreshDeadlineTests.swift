import Foundation
import Testing
import TetherTestSupport

/// A token server that sends its headers, then a byte a second, cannot hold
/// `tether token print` (and the group's refresh lock) past the login's
/// deadline: the refresh ends with a clear error, the lock is free at once,
/// and the session is kept for the next try.
@Suite(.timed) struct RefreshDeadlineTests {
    @Test(.waits) func aTricklingServerIsCutAtTheDeadlineAndTheLockIsReleased() throws {
        let group = try TestGroup()
        let server = try HostileHTTPServer(in: group.dir)
        let login = try group.start(["login", "--style", "json", "--token-url", server.baseURL + "/token",
                                     "--refresh-url", server.baseURL + "/token-trickle", "--username", "courier",
                                     "--password-stdin", "--timeout", "2"])
        login.writeStdin("pw\n")
        login.closeStdin()
        let loggedIn = try login.waitForExit(timeout: 30)
        let loginErrors = try login.standardError()
        #expect(loggedIn == 0, "\(loginErrors)")

        let started = Date()
        let print = try group.run(["token", "print"], timeout: 60)
        let took = Date().timeIntervalSince(started)
        #expect(print.status == 3, "\(print.stderr)")
        #expect(print.stderr.contains("the request timed out"), "\(print.stderr)")
        #expect(print.stdout.isEmpty)
        #expect(took >= 1.9 && took < 10, "the whole refresh ends at its 2 s deadline, not \(took) s")
        try server.waitForRequest("/token-trickle")

        // The refresh lock is free the moment the command ends: an OFD write
        // lock (Tether's kind) is granted at once.
        let probe = try runCommand("/usr/bin/env", ["python3", "-c", """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(4))
            print("free")
            """, group.path + "/locks/refresh.lock"])
        #expect(probe.stdout.contains("free"), "\(probe.stderr)")
        // Nothing was lost: the session is still there to refresh later.
        let status = try group.run(["token", "status", "--json"])
        #expect(try group.json(status)["state"] as? String == "userAuthenticated")
    }
}
