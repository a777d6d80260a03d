import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// A rotated pair the store cannot take is never dropped: the server may have
/// revoked the old refresh token already, so the new pair is the session.
@Suite(.timed) struct TokenSaveFailureTests {
    func stored(_ group: TestGroup) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: group.credentialsPath))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func storedRefreshToken(_ group: TestGroup) throws -> String? {
        (try stored(group)["user"] as? [String: Any])?["refreshToken"] as? String
    }

    @Test func aRotatedPairTheStoreCannotTakeIsKeptServedAndSavedLater() throws {
        let fixture = try HostFixture()
        let group = fixture.group
        // No grace: a reused refresh token ends the session, as strict servers do.
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        let original = try #require(try storedRefreshToken(group))
        let host = try fixture.startHost()

        // The disk "fails": every temp name the host's writer may use is taken.
        let planted = (0..<16).map { "\(group.secrets)/.credentials.json.\(host.pid).\($0).tmp" }
        for path in planted { #expect(mkdir(path, 0o700) == 0) }
        let client = try RawClient(path: group.path + "/host.sock")
        let token = try client.tokenGet(id: 1)
        #expect(try server.counters()["refreshes"] == 1)
        #expect(try storedRefreshToken(group) == original, "the store did not take the new pair")
        try host.waitForError(containing: "the credential store is failing")

        // Asked again: the kept pair, and no second refresh with the old token.
        #expect(try client.tokenGet(id: 2) == token)
        #expect(try server.counters()["refreshes"] == 1)

        // The disk recovers: the next request saves the kept pair.
        for path in planted { rmdir(path) }
        #expect(try client.tokenGet(id: 3) == token)
        let saved = try #require(try storedRefreshToken(group))
        #expect(saved != original)
        client.close()
        #expect(try host.stop() == 0)

        // A later process refreshes with what was saved: no reuse, no logout.
        try group.expireStoredUser()
        let printed = try group.run(["token", "print"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let counters = try server.counters()
        #expect(counters["refreshes"] == 2 && counters["reuseDetected"] == 0, "\(counters)")
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "userAuthenticated")
    }
}

extension RawClient {
    /// Asks the host for the user's access token (`token.get`, id `id`).
    func tokenGet(id: Int) throws -> String {
        askForToken(id: id)
        return try tokenAnswer()
    }

    func askForToken(id: Int) {
        send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(HostMethod.tokenGet)"}"#.utf8) + [0x0a])
    }

    /// The access token in the next answer.
    func tokenAnswer() throws -> String {
        let line = try #require(readLine(timeout: 30_000))
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let result = try #require(answer["result"] as? [String: Any], "\(line)")
        return try #require(result["accessToken"] as? String)
    }
}

extension TestGroup {
    /// Makes the stored user's access token expired (the file replaced
    /// whole, as the store writes it), so the next read refreshes.
    func expireStoredUser() throws {
        let data = try #require(FileManager.default.contents(atPath: credentialsPath))
        var credentials = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var user = try #require(credentials["user"] as? [String: Any])
        user["expiresAt"] = Date().timeIntervalSince1970 - 100
        credentials["user"] = user
        let replacement = secrets + "/credentials.json.test"
        try writeFile(replacement, String(decoding: try JSONSerialization.data(withJSONObject: credentials), as: UTF8.self),
                      mode: 0o600)
        #expect(rename(replacement, credentialsPath) == 0)
    }
}
