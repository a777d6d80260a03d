import Foundation
import Testing
import TetherTestSupport

/// `expires_in` as some servers send it, a string: digits are read as a
/// number; anything else is a clear error that loses nothing, since the
/// answer also rotated the refresh token.
@Suite(.timed) struct ExpiresInTests {
    func loggedIn(_ value: String) throws -> (TestGroup, HostileHTTPServer) {
        let group = try TestGroup()
        let server = try HostileHTTPServer(in: group.dir)
        let login = try group.start(["login", "--token-url", server.baseURL + "/rotating-" + value,
                                     "--client-id", "app", "--username", "courier", "--password-stdin"])
        login.writeStdin("pw\n")
        login.closeStdin()
        let status = try login.waitForExit(timeout: 30)
        #expect(status == 0, "\((try? login.standardError()) ?? "")")
        return (group, server)
    }

    @Test func aNumericStringIsANumberOfSeconds() throws {
        let (group, server) = try loggedIn("3600")
        for _ in 0..<2 {  // the second use finds the token good for an hour
            let print = try group.run(["token", "print"])
            #expect(print.status == 0 && print.stdout == "access-2\n", "\(print.stderr)")
        }
        let user = try #require(try group.json(try group.run(["token", "status", "--json"]))["user"] as? [String: Any])
        let expiresIn = try #require(user["expiresIn"] as? Double)
        #expect(expiresIn > 3500 && expiresIn <= 3600, "\(user)")
        #expect(try server.counts()["/rotating-3600"] == 2, "one login, one refresh")
    }

    @Test func anythingElseIsAnErrorAndTheRotatedTokenIsKept() throws {
        let (group, server) = try loggedIn("soon")
        for _ in 0..<3 {
            let print = try group.run(["token", "print"])
            #expect(print.status == 3, "\(print.stderr)")
            #expect(print.stderr.contains("expires_in (soon) is not a number of seconds"), "\(print.stderr)")
            #expect(print.stdout.isEmpty)
        }
        // Each refresh sent the token the one before received: none was lost.
        let counts = try server.counts()
        #expect(counts["/rotating-soon"] == 4 && counts["stale"] == nil, "\(counts)")
        let state = try group.json(try group.run(["token", "status", "--json"]))["state"] as? String
        #expect(state == "userAuthenticated")
    }
}
