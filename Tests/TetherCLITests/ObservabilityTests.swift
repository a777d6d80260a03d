import Foundation
import Testing
import TetherLoop
import TetherTestSupport
import TetherIPC

/// What the system tells about itself: named events with their metadata,
/// extensions' JSON lines as records, and metrics, with never a secret.
@Suite(.timed) struct ObservabilityTests {
    /// Every event name docs/operations.md documents; a record naming another is a typo.
    static let documentedEvents: Set<String> = [
        "auth.login.success", "auth.login.failure", "auth.refresh.success", "auth.refresh.failure",
        "auth.session.ended", "auth.user.changed", "extension.started", "extension.attached", "extension.exited",
        "extension.restarted", "extension.unresponsive", "extension.failed", "push.delivered", "push.timedOut",
        "feature.started", "feature.stopped", "host.started", "host.stopping", "store.corrupt",
    ]

    /// A host's life told in events: starts, attaches, a kill -9 and its
    /// restart, a crash loop, pushes answered and timed out, features; and
    /// an extension's own JSON lines logged as records at their level.
    @Test func theHostTellsWhatHappensAsEventsWithMetadata() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("crashy", script: "exit 3")
        try fixture.addExtension("victim", script: "exec sleep 1000")
        try fixture.addExtension("chatty", script: #"""
            echo '{"level":"warning","message":"disk low","freeMiB":12,"extension":"forged","origin":"host"}' >&2
            echo '{"@level":"info","@message":"hclog style","@module":"sync"}'
            echo '{"level":"shout","message":"not a level"}'
            echo "plain line"
            exec sleep 1000
            """#)
        let notify = #"{"name":"notify","role":"notification","executable":"\#(exampleExecutable("example-notification"))","activation":"always"}"#
        try writeFile("\(fixture.extensions)/notify.extension.json", notify)
        // The SDK's context.log: records on its stderr, plain lines on stdout.
        let logging = #"{"name":"logging","role":"widget","executable":"\#(exampleExecutable("SDKFixture"))","arguments":["logging-widget"],"activation":"always"}"#
        try writeFile("\(fixture.extensions)/logging.extension.json", logging)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions,
                                                             "--grace", "2", "--log-format", "json"]))
        var log = RecordReader(host)
        try log.waitFor("the SDK's info record") { $0["message"] as? String == "timeline ready" }
        try log.waitFor("the host's start") { $0["event"] as? String == "host.started" }
        try log.waitFor("notify's attach") { $0["event"] as? String == "extension.attached" && $0["extension"] as? String == "notify" }
        try log.waitFor("plain line") { $0["message"] as? String == "plain line" }

        // kill -9: an exit with its signal, then a restart.
        let victim = try #require((try fixture.status()["extensions"] as? [[String: Any]])?
            .first { $0["name"] as? String == "victim" }?["pid"] as? Int)
        kill(Int32(victim), SIGKILL)
        try log.waitFor("victim's restart") { $0["event"] as? String == "extension.restarted" && $0["extension"] as? String == "victim" }
        try log.waitFor("victim started again") {
            $0["event"] as? String == "extension.started" && $0["extension"] as? String == "victim" && $0["pid"] as? Int != victim
        }

        // A push answered, and one that runs out of its budget.
        #expect(try fixture.group.run(["push", #"{"title":"Hi"}"#]).status == 0)
        #expect(try fixture.group.run(["push", "--budget", "0.2", #"{"title":"Slow","delayMs":10000}"#]).status == 0)
        try log.waitFor("the push") { $0["event"] as? String == "push.delivered" }
        #expect(try fixture.group.run(["feature", "start", "rec"]).status == 0)
        #expect(try fixture.group.run(["feature", "stop", "rec"]).status == 0)
        try log.waitFor("the feature's stop") { $0["event"] as? String == "feature.stopped" }
        // The crash loop ends in a failure (an error: on stderr).
        try host.waitForError(containing: #""event":"extension.failed""#, timeout: 30)
        try host.waitForError(containing: #""event":"push.timedOut""#, timeout: 30)

        #expect(try host.stop() == 0)
        let records = try log.rest() + (try host.standardError()).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        func event(_ name: String, _ extensionName: String? = nil, where test: ([String: Any]) -> Bool = { _ in true }) -> [String: Any]? {
            records.first { $0["event"] as? String == name && (extensionName == nil || $0["extension"] as? String == extensionName) && test($0) }
        }
        for record in records {
            if let name = record["event"] as? String { #expect(Self.documentedEvents.contains(name), "\(record)") }
        }
        let started = try #require(event("host.started"))
        #expect(started["pid"] as? Int == Int(host.pid) && started["group"] as? String == fixture.group.path)
        #expect(started["version"] as? String == TetherVersion.current, "\(started)")
        let launched = try #require(event("extension.started", "victim"))
        #expect(launched["pid"] as? Int == victim && launched["role"] as? String == "widget")
        let attached = try #require(event("extension.attached", "notify"))
        #expect(attached["managed"] as? Bool == true && attached["role"] as? String == "notification")
        // One exit, one record (then the stop at the end is another).
        #expect(records.filter { $0["event"] as? String == "extension.exited" && $0["extension"] as? String == "victim"
            && $0["reason"] as? String == "crashed" }.count == 1)
        let killed = try #require(event("extension.exited", "victim"))
        #expect(killed["reason"] as? String == "crashed" && killed["signal"] as? Int == 9 && killed["ranForMs"] is Int, "\(killed)")
        #expect(event("extension.restarted", "victim")?["restarts"] as? Int == 1)
        let crashed = try #require(event("extension.exited", "crashy"))
        #expect(crashed["reason"] as? String == "exited" && crashed["code"] as? Int == 3)
        let failed = try #require(event("extension.failed", "crashy"))
        #expect(failed["level"] as? String == "error" && (failed["reason"] as? String)?.contains("5 times in a row") == true)
        let delivered = try #require(event("push.delivered", where: { $0["modified"] as? Bool == true }))
        #expect(delivered["extension"] as? String == "notify" && delivered["outcome"] as? String == "answered")
        #expect(delivered["durationMs"] is Int)
        let timedOut = try #require(event("push.timedOut"))
        #expect(timedOut["extension"] as? String == "notify" && timedOut["level"] as? String == "warning")
        #expect((timedOut["durationMs"] as? Int ?? 0) >= 200)
        #expect(event("feature.started")?["feature"] as? String == "rec")
        #expect(event("feature.stopped")?["feature"] as? String == "rec")
        #expect(event("host.stopping") != nil)

        // The extension's JSON lines: records at their level, fields kept,
        // the host's own keys not overridden.
        let low = try #require(records.first { $0["message"] as? String == "disk low" })
        #expect(low["level"] as? String == "warning" && low["freeMiB"] as? Int == 12, "\(low)")
        #expect(low["extension"] as? String == "chatty" && low["origin"] as? String == "output" && low["stream"] as? String == "stderr")
        let hclog = try #require(records.first { $0["message"] as? String == "hclog style" })
        #expect(hclog["level"] as? String == "info" && hclog["@module"] as? String == "sync" && hclog["extension"] as? String == "chatty")
        let stock = try #require(records.first { $0["message"] as? String == "low stock" })
        #expect(stock["level"] as? String == "warning" && stock["extension"] as? String == "logging", "\(stock)")
        #expect(stock["sku"] as? String == "A1" && stock["left"] as? String == "3")
        let ready = try #require(records.first { $0["message"] as? String == "timeline ready" })
        #expect(ready["level"] as? String == "info" && ready["stream"] as? String == "stderr" && ready["entries"] as? String == "1")
        // A plain line is output: at info, from standard output.
        let plain = try #require(records.first { $0["message"] as? String == "a plain line" })
        #expect(plain["level"] as? String == "info" && plain["stream"] as? String == "stdout", "\(plain)")
        #expect(!records.contains { $0["message"] as? String == "not shown at the default level" })
        // Not a record (an unknown level): the line as it is.
        #expect(records.contains { $0["message"] as? String == #"{"level":"shout","message":"not a level"}"# })
    }

    /// Logins and a refresh storm told as events by every process, the
    /// metrics parse as Prometheus text and move with what happens, and no
    /// log line or metric holds a secret of the run.
    @Test func authEventsAndMetricsMoveWithWhatHappensAndHoldNoSecret() throws {
        let fixture = try HostFixture()
        let server = try DemoServer(in: fixture.group.dir)
        let environment = ["TETHER_LOG_LEVEL": "info", "TETHER_LOG_FORMAT": "json"]
        var everything = ""

        func login(password: String) throws -> (status: Int32, stderr: String) {
            let login = try startTether(fixture.group.withGroup([
                "login", "--token-url", server.tokenURL, "--client-id", "tether-demo",
                "--client-secret-file", server.secretFile, "--username", "alice", "--password-stdin",
            ]), environment: environment)
            login.writeStdin(password + "\n")
            login.closeStdin()
            let status = try login.waitForExit(timeout: 30)
            let stderr = try login.standardError()
            everything += try login.remainingOutput() + stderr
            return (status, stderr)
        }
        let refused = try login(password: "wrong-\(UUID().uuidString)")
        #expect(refused.status == 1)
        let failure = try #require(Self.records(refused.stderr).first { $0["event"] as? String == "auth.login.failure" })
        #expect(failure["grant"] as? String == "password" && failure["reason"] as? String == "refused", "\(failure)")
        // Logged in with tokens already expired: the next ask is a refresh.
        try server.post("/admin/settings", ["accessTTL": -5])
        let accepted = try login(password: server.password)
        try server.post("/admin/settings", ["accessTTL": 3600])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let success = try #require(Self.records(accepted.stderr).first { $0["event"] as? String == "auth.login.success" })
        #expect(success["style"] as? String == "oauth2" && success["grant"] as? String == "password" && success["durationMs"] is Int)
        let expired = try fixture.group.storedTokens()

        try fixture.addExtension("victim", script: "exec sleep 1000")
        let notify = #"{"name":"notify","role":"notification","executable":"\#(exampleExecutable("example-notification"))","activation":"always"}"#
        try writeFile("\(fixture.extensions)/notify.extension.json", notify)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions,
                                                             "--grace", "2", "--log-format", "json"]))
        var log = RecordReader(host)
        try log.waitFor("notify's attach") { $0["event"] as? String == "extension.attached" && $0["extension"] as? String == "notify" }
        let before = try Self.metrics(fixture.group, text: &everything)
        #expect(before["tether_extension_restarts_total{extension=victim}"] == 0)
        #expect(before["tether_extension_launches_total{extension=victim}"] == 1)
        #expect((before["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((before["process_open_fds"] ?? 0) > 3)
        #expect((before["tether_extension_resident_memory_bytes{extension=victim}"] ?? 0) > 0)
        #expect(before["tether_token_refreshes_total{outcome=refreshed}"] == 0)

        // Four processes of eight tasks at once: one refresh, told by the
        // one that did it; the others found it done.
        let storms = try (0..<4).map { _ in
            try TestProcess(exampleExecutable("example-token-storm"), fixture.group.withGroup(["--tasks", "8"]), environment: environment)
        }
        for storm in storms { try storm.expectLine("ready", timeout: 30) }
        for storm in storms { storm.writeStdin("go\n") }
        var refreshes: [[String: Any]] = []
        for storm in storms {
            #expect(try storm.waitForExit(timeout: 60) == 0)
            let stderr = try storm.standardError()
            everything += try storm.remainingOutput() + stderr
            refreshes += Self.records(stderr).filter { $0["event"] as? String == "auth.refresh.success" }
        }
        #expect(refreshes.filter { $0["refreshedHere"] as? Bool == true }.count == 1, "\(refreshes)")
        #expect(refreshes.allSatisfy { $0["kind"] as? String == "user" && $0["durationMs"] is Int })
        #expect(try server.counters()["refreshes"] == 1)
        // `token print` with events on: its stdout is the token alone.
        let printed = try tether(fixture.group.withGroup(["token", "print"]), environment: environment)
        #expect(printed.status == 0 && printed.stdout.split(separator: "\n").count == 1)
        everything += printed.stderr

        // kill -9, a push, a refused request: the counters move.
        let victim = try #require((try fixture.status()["extensions"] as? [[String: Any]])?
            .first { $0["name"] as? String == "victim" }?["pid"] as? Int)
        kill(Int32(victim), SIGKILL)
        try log.waitFor("victim started again") {
            $0["event"] as? String == "extension.started" && $0["extension"] as? String == "victim" && $0["pid"] as? Int != victim
        }
        #expect(try fixture.group.run(["push", #"{"title":"Hi"}"#]).status == 0)
        #expect(try fixture.group.run(["feature", "stop", "never-started"]).status == 1)
        let after = try Self.metrics(fixture.group, text: &everything)
        #expect(after["tether_token_refreshes_total{outcome=refreshed}"] == 1, "\(after)")
        #expect(after["tether_extension_exits_total{extension=victim,reason=crashed}"] == 1)
        #expect(after["tether_extension_restarts_total{extension=victim}"] == 1)
        #expect(after["tether_extension_launches_total{extension=victim}"] == 2)
        #expect(after["tether_extension_attaches_total{by=host,extension=notify}"] == 1)
        #expect(after["tether_push_deliveries_total{extension=notify,outcome=answered}"] == 1)
        #expect(after["tether_push_duration_seconds_count{extension=notify}"] == 1)
        #expect(after["tether_rpc_requests_total{method=push.send}"] == 1)
        #expect(after["tether_rpc_errors_total{code=-32001,method=feature.stop}"] == 1, "\(after.filter { $0.key.contains("rpc") })")
        #expect((after["tether_rpc_requests_total{method=host.metrics}"] ?? 0) >= 1)
        #expect((after["tether_connections"] ?? 0) >= 1)

        #expect(try host.stop() == 0)
        everything += (try log.rest()).map { "\($0)" }.joined(separator: "\n") + (try host.standardError())
        let fresh = try fixture.group.storedTokens()
        // The session ends by logout; another user's login clears the first one's data.
        let logout = try tether(fixture.group.withGroup(["logout"]), environment: environment)
        everything += logout.stdout + logout.stderr
        let ended = try #require(Self.records(logout.stderr).first { $0["event"] as? String == "auth.session.ended" }, "\(logout.stderr)")
        #expect(ended["reason"] as? String == "logout" && ended["kind"] as? String == "user")
        let bob = try startTether(fixture.group.withGroup([
            "login", "--token-url", server.tokenURL, "--client-id", "tether-demo",
            "--client-secret-file", server.secretFile, "--username", "bob", "--password-stdin",
        ]), environment: environment)
        bob.writeStdin(server.bobPassword + "\n")
        bob.closeStdin()
        #expect(try bob.waitForExit(timeout: 30) == 0)
        let bobErrors = try bob.standardError()
        everything += try bob.remainingOutput() + bobErrors
        let changed = try #require(Self.records(bobErrors).first { $0["event"] as? String == "auth.user.changed" }, "\(bobErrors)")
        #expect(changed["removedKeys"] as? Int == 0 && changed["removedFiles"] as? Int == 0)
        let bobTokens = try fixture.group.storedTokens()
        for secret in [expired.access, expired.refresh, fresh.access, fresh.refresh, bobTokens.access, bobTokens.refresh,
                       server.password, server.bobPassword, server.clientSecret] {
            #expect(!everything.contains(secret), "a secret in the output")
        }
    }

    /// A store that fails to parse is moved aside (one copy kept), exit 3,
    /// and told as an event.
    @Test func aCorruptStoreIsToldAsAnEvent() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "theme", #""dark""#]).status == 0)
        try writeFile(group.path + "/stores/defaults.json", "{not json", mode: 0o600)
        let read = try tether(group.withGroup(["defaults", "get", "theme"]),
                                 environment: ["TETHER_LOG_LEVEL": "info", "TETHER_LOG_FORMAT": "json"])
        #expect(read.status == 3)
        let event = try #require(Self.records(read.stderr).first { $0["event"] as? String == "store.corrupt" }, "\(read.stderr)")
        let kept = try #require(event["keptAs"] as? String)
        let path = group.path + "/stores/defaults.json"
        #expect(event["path"] as? String == path && kept.hasPrefix(path + ".corrupt-"))
        #expect(FileManager.default.fileExists(atPath: kept))
        let aside = try FileManager.default.contentsOfDirectory(atPath: group.path + "/stores").filter { $0.contains(".corrupt-") }
        #expect(aside.count == 1, "one copy kept: \(aside)")
    }

    // MARK: - Helpers

    static func records(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func metricsText(_ group: TestGroup) throws -> String {
        let result = try group.run(["metrics"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    /// `tether metrics`, parsed by prometheus_client's own parser: each
    /// sample as `name{label=value,...}` (labels sorted) → value.
    static func metrics(_ group: TestGroup, text: inout String) throws -> [String: Double] {
        let text = try { () throws -> String in
            let fetched = try metricsText(group)
            text += fetched
            return fetched
        }()
        let parser = try TestProcess(try PythonEnvironment.python(), ["-c", """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            samples = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                for sample in family.samples:
                    labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                    samples[sample.name + ("{" + labels + "}" if labels else "")] = sample.value
            print(json.dumps(samples))
            """])
        parser.writeStdin(text)
        parser.closeStdin()
        let status = try parser.waitForExit(timeout: 30)
        let errors = try parser.standardError()
        #expect(status == 0, "\(errors)")
        let output = try parser.remainingOutput()
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Double], "\(output)")
    }
}

/// The host's stdout as JSON records, read until one matches.
struct RecordReader {
    let process: TestProcess
    private(set) var seen: [[String: Any]] = []

    init(_ process: TestProcess) { self.process = process }

    /// Until a record, read now or before, matches.
    mutating func waitFor(_ what: String, timeout: Double = 30, _ matches: ([String: Any]) -> Bool) throws {
        if seen.contains(where: matches) { return }
        let deadline = TestTimeout.deadline(after: timeout)
        while Date() < deadline {
            guard let line = try? process.readLine(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { break }
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            seen.append(record)
            if matches(record) { return }
        }
        throw TestTimeout(what: "\(what) in the host's records (saw \(seen.map { $0["message"] ?? "?" }))")
    }

    /// Everything read, and the rest once the process closed its stdout.
    mutating func rest() throws -> [[String: Any]] {
        seen + ObservabilityTests.records(try process.remainingOutput())
    }
}
