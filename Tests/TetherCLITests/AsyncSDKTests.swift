import Foundation
import Testing
import TetherTestSupport

/// The async SDK in real processes (`SDKFixture`, one executable whose first
/// argument picks the role): timelines that await, a throwing timeline
/// retried, the notification budget with and without `timeWillExpire`,
/// keys handled in order and a throwing one survived, and a 401 answered by
/// one refresh and one retry across processes.
@Suite(.timed) struct AsyncSDKTests {
    let fixtureExecutable = exampleExecutable("SDKFixture")

    func startFixture(_ mode: String, _ group: TestGroup, name: String, _ extra: [String] = [],
                      environment: [String: String]? = nil) throws -> TestProcess {
        try TestProcess(fixtureExecutable, [mode, "--group", group.path, "--name", name] + extra, environment: environment)
    }

    /// Reads lines until one starts with `prefix`; returns every line read.
    func lines(_ process: TestProcess, until prefix: String, timeout: Double = 10) throws -> [String] {
        var seen: [String] = []
        while let line = try process.readLine(timeout: timeout) {
            seen.append(line)
            if line.hasPrefix(prefix) { return seen }
        }
        throw TestTimeout(what: "a line starting '\(prefix)' (saw \(seen))")
    }

    /// The timeline awaits a slow fetch (1.5 s); a reload asked for meanwhile
    /// (a defaults change) waits for it, then runs once.
    @Test(.waits) func aWidgetAwaitsASlowFetchAndAReloadAskedMeanwhileWaitsForIt() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        #expect(try server.login(group).status == 0)
        try server.post("/admin/settings", ["ordersLatencyMs": 1500])
        let widget = try startFixture("slow-widget", group, name: "slow", ["--url", server.baseURL + "/orders"])
        defer { widget.stopAlways() }
        _ = try lines(widget, until: "timeline call (start) started")
        #expect(try group.run(["defaults", "set", "greeting", "\"hi\""]).status == 0)
        let seen = try lines(widget, until: "timeline call (defaults) started", timeout: 20)
        let first = seen.firstIndex(of: "timeline (start): 1 entries, reload never")
        let shown = seen.firstIndex(of: "shows: 3 orders")
        #expect(first != nil && shown != nil, "\(seen)")
        #expect(seen.last == "timeline call (defaults) started")
        #expect(seen.filter { $0.hasPrefix("timeline call") }.count == 1, "no second call while the first ran: \(seen)")
        _ = try lines(widget, until: "timeline (defaults): 1 entries", timeout: 20)
    }

    /// Two failures: the last timeline stays, and it is asked again after
    /// 1 s, then 2 s; then it shows.
    @Test(.waits) func aThrowingTimelineKeepsTheLastOneAndIsRetriedWithBackoff() throws {
        let group = try TestGroup()
        let widget = try startFixture("flaky-widget", group, name: "flaky", ["--failures", "2"])
        defer { widget.stopAlways() }
        let seen = try lines(widget, until: "shows: ok after 2 failures", timeout: 20)
        let failures = seen.filter { $0.hasPrefix("timeline (start) failed: ") }
        #expect(failures == [
            "timeline (start) failed: no data yet (call 1); keeping the last one, trying again in 1 s",
            "timeline (start) failed: no data yet (call 2); keeping the last one, trying again in 2 s",
        ], "\(seen)")
        #expect(seen.contains("timeline (start): 1 entries, reload never"))
    }

    /// Past the budget didReceive is cancelled. `timeWillExpire` comes
    /// first: 1 s before the end for a 3 s budget, at the end for 0.5 s; its
    /// content is delivered when it gives one, the original when not; a
    /// throwing didReceive delivers the original at once.
    @Test(.waits) func theBudgetCancelsDidReceiveAfterTimeWillExpire() throws {
        let fixture = try HostFixture()
        let object: [String: Any] = ["name": "budget", "role": "notification", "executable": fixtureExecutable,
                                     "arguments": ["budget-notification"], "activation": "always"]
        try JSONSerialization.data(withJSONObject: object)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/budget.extension.json"))
        try fixture.withHost { host in
            _ = try host.expectLineStarting("[budget] attached to host pid \(host.pid)")

            func push(_ budget: String, _ payload: String) throws -> [String: Any] {
                let result = try fixture.group.run(["push", "--json", "--budget", budget, payload], timeout: 20)
                #expect(result.status == 0, "\(result.stderr)")
                let delivered = try fixture.group.json(result)["delivered"] as? [[String: Any]]
                return try #require(delivered?.first)
            }
            func title(_ delivery: [String: Any]) -> String? { (delivery["content"] as? [String: Any])?["title"] as? String }

            let partial = try push("3", #"{"title":"Slow","sleepMs":10000,"partial":true}"#)
            #expect(title(partial) == "partial" && partial["timedOut"] as? Bool == true, "\(partial)")
            var seen = try host.expectLineStarting("[budget] didReceive cancelled")
            #expect(seen.contains("[budget] timeWillExpire: partial"), "\(seen)")

            let original = try push("3", #"{"title":"Slow","sleepMs":10000}"#)
            #expect(title(original) == "Slow" && original["timedOut"] as? Bool == true && original["modified"] as? Bool == false)
            seen = try host.expectLineStarting("[budget] didReceive cancelled")
            #expect(seen.contains("[budget] timeWillExpire: nothing"), "\(seen)")
            #expect(seen.contains("[budget] time budget of 3000 ms ran out; delivering the original"), "\(seen)")

            let short = try push("0.5", #"{"title":"Slow","sleepMs":10000,"partial":true}"#)
            #expect(title(short) == "partial" && short["timedOut"] as? Bool == true, "\(short)")
            _ = try host.expectLineStarting("[budget] didReceive cancelled")

            let thrown = try push("3", #"{"title":"Bad","throw":true}"#)
            #expect(title(thrown) == "Bad" && thrown["timedOut"] as? Bool == false && thrown["modified"] as? Bool == false)
            _ = try host.expectLineStarting("[budget] didReceive failed: could not rewrite; delivering the original")

            let quick = try push("3", #"{"title":"Quick"}"#)
            #expect(title(quick) == "rewritten" && quick["timedOut"] as? Bool == false)

            // Cancellation reaches a fetch in flight: it ends with the budget,
            // not when the (10 s) answer would have come.
            let server = try DemoServer(in: fixture.group.dir)
            #expect(try server.login(fixture.group).status == 0)
            try server.post("/admin/settings", ["ordersLatencyMs": 10_000])
            let fetching = try push("0.5", #"{"title":"Fetch","fetch":"\#(server.baseURL)/orders"}"#)
            #expect(title(fetching) == "Fetch" && fetching["timedOut"] as? Bool == true)
            seen = try host.expectLineStarting("[budget] didReceive fetch ended: ", timeout: 5)
            #expect(seen.last == "[budget] didReceive fetch ended: cancelled", "\(seen)")
        }
    }

    /// An access token the server refuses early (401): each of two processes
    /// gets one forced refresh and one retry, and the token endpoint is
    /// asked once between them. A key that throws is reported, and the
    /// keyboard goes on.
    @Test func a401GetsOneRefreshAcrossProcessesAndOneRetry() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        #expect(try server.login(group).status == 0)
        let openAccess = ["TETHER_OPEN_ACCESS": "1"]  // a keyboard with open access refreshes itself, coordinated
        let keyboards = try ["k1", "k2"].map { try startFixture("fetch-keyboard", group, name: $0, environment: openAccess) }
        defer { keyboards.forEach { $0.stopAlways() } }
        for keyboard in keyboards {
            try keyboard.expectLine("no host is running; carrying on without a host")
        }
        let url = server.baseURL + "/orders"
        keyboards[0].writeStdin("fetch \(url)\n")
        try keyboards[0].expectLine("fetched 3 orders", timeout: 20)

        try server.post("/admin/reject-access", [:])
        // The refresh's answer takes a second (the grant takes effect at
        // once): the other process meets the 401 too, and waits for it.
        try server.post("/admin/faults", ["latencyMs": 1000, "latencyCount": 1])
        let before = try server.counters()
        for keyboard in keyboards { keyboard.writeStdin("fetch \(url)\n") }
        for keyboard in keyboards { try keyboard.expectLine("fetched 3 orders", timeout: 20) }
        let after = try server.counters()
        func delta(_ key: String) -> Int { (after[key] ?? 0) - (before[key] ?? 0) }
        #expect(delta("rejections") == 2, "both presented the refused token: \(after)")
        #expect(delta("refreshes") == 1, "one refresh between them: \(after)")
        #expect(delta("reuseDetected") == 0)

        // A second refusal within 30 s forces no second refresh: the 401 stands.
        try server.post("/admin/reject-access", [:])
        keyboards[0].writeStdin("fetch \(url)\n")
        try keyboards[0].expectLine("fetch failed: /orders answered HTTP 401", timeout: 20)
        #expect(try server.counters()["refreshes"] == after["refreshes"], "no second forced refresh")
        #expect(try server.login(group).status == 0, "a new sign-in: a token the server has not refused")

        keyboards[1].writeStdin("throw\nfetch \(url)\n")
        try keyboards[1].expectLine("keyPressed failed: the key could not be handled")
        try keyboards[1].expectLine("fetched 3 orders", timeout: 20)
    }

    /// The access token goes only to the origins allowed at login: a URL
    /// elsewhere (as one planted in the shared defaults would be) is
    /// refused before any request; `--api-origin` allows more.
    @Test func theAccessTokenGoesOnlyToTheOriginsAllowedAtLogin() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        let otherDirectory = try TemporaryDirectory()
        let elsewhere = try DemoServer(in: otherDirectory)
        #expect(try server.login(group).status == 0)
        let keyboard = try startFixture("fetch-keyboard", group, name: "k", environment: ["TETHER_OPEN_ACCESS": "1"])
        defer { keyboard.stopAlways() }
        try keyboard.expectLine("no host is running; carrying on without a host")
        keyboard.writeStdin("fetch \(server.baseURL)/orders\n")
        try keyboard.expectLine("fetched 3 orders", timeout: 20)

        keyboard.writeStdin("fetch \(elsewhere.baseURL)/orders?key=1\n")
        let refusal = "fetch failed: cannot fetch /orders: the access token goes only to \(server.baseURL), "
            + "not to \(elsewhere.baseURL) (tether login --api-origin ORIGIN allows more)"
        try keyboard.expectLine(refusal, timeout: 20)
        let untouched = try elsewhere.counters()
        #expect(untouched["rejections"] == 0 && untouched["ordersServed"] == 0, "no request reached it: \(untouched)")
        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["apiOrigins"] as? [String] == [server.baseURL])

        // Allowed at login: the token goes there (and that server, whose keys are its own, refuses it).
        #expect(try server.login(group, extra: ["--api-origin", server.baseURL, "--api-origin", elsewhere.baseURL]).status == 0)
        keyboard.writeStdin("fetch \(elsewhere.baseURL)/orders\n")
        try keyboard.expectLine("fetch failed: /orders answered HTTP 401", timeout: 20)
        #expect(try elsewhere.counters()["rejections"] ?? 0 >= 1)
    }

    /// Through the host (a widget is host-brokered): the widget's 401 makes
    /// the host refresh once (`token.get` with the rejected token).
    @Test func aWidgetsRejectedTokenIsRefreshedByTheHostOnce() throws {
        let fixture = try HostFixture()
        let server = try DemoServer(in: fixture.group.dir)
        #expect(try server.login(fixture.group).status == 0)
        let object: [String: Any] = ["name": "slow", "role": "widget", "executable": fixtureExecutable,
                                     "arguments": ["slow-widget", "--url", server.baseURL + "/orders"]]
        try JSONSerialization.data(withJSONObject: object)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/slow.extension.json"))
        try fixture.withHost { host in
            _ = try host.expectLineStarting("[slow] shows: 3 orders", timeout: 20)

            try server.post("/admin/reject-access", [:])
            let before = try server.counters()
            #expect(try fixture.group.run(["reload", "slow"]).status == 0)
            _ = try host.expectLineStarting("[slow] shows: 3 orders", timeout: 20)
            let after = try server.counters()
            #expect((after["refreshes"] ?? 0) - (before["refreshes"] ?? 0) == 1, "\(after)")
        }
    }

    /// A hundred fetches at once, after the token expired, all go through
    /// the extension's one loop (libcurl on its uv_poll handles, the
    /// broker's waits resuming there): they all complete with one refresh,
    /// and the process has one thread throughout: no HTTP stack's own (an
    /// event loop, a pool), and none of Swift's shared pool either (an
    /// await that resumed there would start libdispatch's workers, named
    /// after their queues' "…qos…", and its manager thread, which stays).
    @Test func aHundredFetchesAtOnceRunOnTheOneLoop() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        let widget = try startFixture("fetch-widget", group, name: "w",
                                      ["--url", server.baseURL + "/orders", "--count", "100"])
        defer { widget.stopAlways() }
        _ = try lines(widget, until: "shows: fetched 100 of 100", timeout: 60)
        let counters = try server.counters()
        #expect(counters["ordersServed"] == 100 && counters["refreshes"] == 1, "\(counters)")
        #expect(threadNames(widget.pid) == ["SDKFixture"])
    }
}

/// The names of a process's threads (`/proc/PID/task/*/comm`).
func threadNames(_ pid: Int32) -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
}
