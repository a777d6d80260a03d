import Foundation
import Testing
import TetherTestSupport

/// The host's output as a collector reads it, and what never reaches it.
@Suite(.timed) struct HostLogTests {
    /// `--log-format json`: one object per line with time, level, message
    /// and metadata; a token an extension prints is redacted on the way.
    @Test func jsonLinesCarryTheExtensionAndNeverATokenItPrints() throws {
        let fixture = try HostFixture()
        let server = try DemoServer(in: fixture.group.dir)
        #expect(try server.login(fixture.group).status == 0)
        let credentials = try String(contentsOfFile: fixture.group.credentialsPath, encoding: .utf8)
        let refreshToken = String(try #require(credentials.firstMatch(of: /"refreshToken":"([^"]+)"/)?.output.1))
        let accessToken = String(try #require(credentials.firstMatch(of: /"accessToken":"([^"]+)"/)?.output.1))
        try fixture.addExtension("leaky", script: #"""
            rt=$(sed -n 's/.*"refreshToken":"\([^"]*\)".*/\1/p' "$(dirname "$TETHER_GROUP")/.group.secrets/credentials.json")
            at=$(sed -n 's/.*"accessToken":"\([^"]*\)".*/\1/p' "$(dirname "$TETHER_GROUP")/.group.secrets/credentials.json")
            echo "plain line"
            echo "leaking refresh $rt"
            echo "leaking access $at" >&2
            echo "done"
            exec sleep 1000
            """#)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions,
                                                             "--grace", "2", "--log-format", "json"]))
        var records: [[String: Any]] = []
        for _ in 0..<20 {
            let line = try #require(try host.readLine(), "the host's stdout ended")
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            records.append(record)
            if record["message"] as? String == "done" { break }
        }
        for record in records {
            #expect(record["time"] is String && record["level"] is String && record["message"] is String, "\(record)")
        }
        #expect(records.contains { ($0["message"] as? String)?.hasPrefix("tether host ready") == true })
        let plain = try #require(records.first { $0["message"] as? String == "plain line" })
        #expect(plain["extension"] as? String == "leaky")
        #expect(plain["stream"] as? String == "stdout")
        let leak = try #require(records.first { ($0["message"] as? String)?.hasPrefix("leaking refresh") == true })
        #expect(leak["message"] as? String == "leaking refresh [redacted]")
        // stderr lines are records too, on the host's stderr.
        #expect(try host.stop() == 0)
        let errors = try host.standardError()
        #expect(errors.contains("leaking access [redacted]"), "\(errors)")
        let everything = records.map { "\($0)" }.joined() + errors + (try host.remainingOutput())
        #expect(!everything.contains(refreshToken) && !everything.contains(accessToken))
    }

    /// A closed terminal (SIGHUP) is not a reason to stop serving.
    @Test func hangupLeavesTheHostServing() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHost()
        host.signal(SIGHUP)
        _ = try host.expectLineStarting("tether host: SIGHUP")
        #expect(try fixture.group.run(["status"]).status == 0)
        #expect(try host.stop() == 0)
    }
}

/// A refresh-lock holder that is stopped cannot stall a refresh forever.
@Suite(.timed) struct StoppedRefreshHolderTests {
    @Test(.waits) func aStoppedHolderGivesAClearErrorAtTheDeadlineAndNothingIsLost() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        // Requests may take 4 s in all (login's --timeout, kept for every refresh).
        try server.loginExpired(group, extra: ["--timeout", "4"])
        // Another process takes the refresh lock (an OFD lock, as Tether's) and is stopped.
        let holder = try TestProcess("/usr/bin/env", ["python3", "-c", """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(4))
            print("held", flush=True)
            sys.stdin.read()
            """, group.path + "/locks/refresh.lock"])
        _ = try holder.expectLine("held")
        holder.signal(SIGSTOP)
        let started = Date()
        let print = try group.run(["token", "print"], timeout: 90)
        let waited = Date().timeIntervalSince(started)
        #expect(print.status == 3, "\(print.stderr)")
        #expect(print.stderr.contains("has been refreshing the token for"), "\(print.stderr)")
        #expect(waited >= 10 && waited < 40, "gave up after \(waited) s (three 4 s request deadlines)")
        #expect(try server.counters()["refreshes"] == 0, "nobody refreshed behind the holder's back")
        holder.signal(SIGCONT)
        holder.closeStdin()
        _ = try holder.waitForExit()
        let after = try group.run(["token", "print"])
        #expect(after.status == 0, "\(after.stderr)")
        #expect(try server.counters()["refreshes"] == 1)
    }
}
