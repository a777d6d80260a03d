import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// Invariant 22, pushes: nothing a client sends makes the host hold
/// unbounded memory (budgets, pushes and payload bytes per sender and in
/// total are capped, each with a clear error), and the user's push is never
/// stuck behind a hostile one.
@Suite(.timed) struct PushLimitTests {
    /// Sends a request; its answer (notifications skipped), or "" after 16 lines or 10 s each.
    func call(_ client: RawClient, _ method: String, _ params: String, id: Int) -> String {
        client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#.utf8) + [0x0a])
        return answer(client, id: id)
    }

    func answer(_ client: RawClient, id: Int) -> String {
        for _ in 0..<16 {
            guard let line = client.readLine() else { break }
            if line.contains(#""id":\#(id)"#) { return line }
        }
        return ""
    }

    func push(_ body: String, budget: Int = 60_000, id: Int) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(HostMethod.push)","params":{"budgetMilliseconds":\#(budget),"payload":{"data":"\#(body)"}}}"#.utf8) + [0x0a]
    }

    func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func budgetsAreCappedAtSixtySeconds() throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            let client = try fixture.rawClient()
            defer { client.close() }
            let hello = call(client, HostMethod.hello, #"{"name":"slow","role":"notification","timeBudgetMilliseconds":1000000000000}"#, id: 1)
            #expect(hello.contains(#""timeBudgetMilliseconds":60000"#), "\(hello)")
            try host.waitForError(containing: "extension 'slow' asked for a push budget of 1000000000000 ms; it has 60000 ms, the host's ceiling")
            let user = try fixture.rawClient()
            defer { user.close() }
            let refused = call(user, HostMethod.push, #"{"budgetMilliseconds":60001,"payload":{"title":"x"}}"#, id: 1)
            #expect(refused.contains(#""budgetMilliseconds\" must be a positive integer of at most 60000 (60 s)"#), "\(refused)")
            let cli = try fixture.group.run(["push", "--budget", "61", #"{"title":"x"}"#])
            #expect(cli.status == 2 && cli.stderr.contains("--budget may be at most 60 seconds"), "\(cli.stderr)")
        }
    }

    @Test func aConnectionsPushesInFlightAreCapped() throws {
        let (fixture, host) = try hostWithMute()
        defer { host.signal(SIGTERM) }
        let client = try fixture.rawClient()
        defer { client.close() }
        for id in 1...8 { client.send(push("n\(id)", id: id)) }
        let ninth = call(client, HostMethod.push, #"{"payload":{"title":"ninth"}}"#, id: 9)
        #expect(ninth.contains("this connection has 8 pushes in flight, its limit; wait for their answers"), "\(ninth)")
        try host.waitForError(containing: "push refused (pid \(getpid())): this connection has 8 pushes in flight")
    }

    /// Eight connections hold 4 MiB each (an on-demand extension that never
    /// says hello keeps them), the host's total: the user's small push
    /// ends one of theirs instead of being refused.
    @Test func theTotalMakesRoomFromTheLargestHolderNotFromTheUsersPush() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/silent.sh", "#!/bin/sh\nexec sleep 300\n", mode: 0o755)
        try writeFile(fixture.extensions + "/silent.extension.json",
                      #"{"name":"silent","role":"notification","executable":"silent.sh","activation":"on-demand"}"#)
        try fixture.withHost { host in
            // {"data":"…"} travels on as exactly 512 KiB (a data field: display fields are bounded).
            let body = String(repeating: "x", count: 524_288 - 11)
            var clients: [RawClient] = []
            defer { for client in clients { client.close() } }
            for _ in 0..<8 {
                let client = try fixture.rawClient()
                clients.append(client)
                for id in 1...8 { client.send(push(body, id: id)) }
                // Answered in order: nothing before the ping's answer was refused.
                let ping = call(client, HostMethod.ping, "{}", id: 100)
                #expect(ping.contains(#""result""#) && !ping.contains("push"), "\(ping.prefix(300))")
            }
            let user = try fixture.group.run(["push", "--json", "--budget", "1", #"{"title":"mine"}"#], timeout: 20)
            #expect(user.status == 0, "\(user.stderr)")
            let delivered = try #require((try fixture.group.json(user)["delivered"] as? [[String: Any]])?.first)
            #expect(delivered["timedOut"] as? Bool == true, "\(delivered)")
            try host.waitForError(containing: "pushes hold 33554432 bytes, the host's limit: ending the 8 of the connection holding the most")
            // A ping's answer follows whatever each connection was answered before it.
            var ended = 0
            for client in clients {
                client.send(Array(#"{"jsonrpc":"2.0","id":101,"method":"\#(HostMethod.ping)"}"#.utf8) + [0x0a])
                var lines = 0
                for _ in 0..<16 {
                    guard let line = client.readLine(), !line.contains(#""id":101"#) else { break }
                    if line.contains("push ended: the host's pushes in flight reached their limit") { lines += 1 }
                }
                if lines > 0 { ended += 1 }
                #expect(lines == 0 || lines == 8)
            }
            #expect(ended == 1)
        }
    }

    /// The issue's attack: a notification extension says hello with a huge
    /// budget, pushes 300 KB payloads to itself with huge budgets (and
    /// none) and never answers. The host stays small, and the user's push
    /// is answered at once (the original: that extension is at its limit of
    /// unanswered pushes).
    @Test(.long) func aHostileNotificationExtensionNeitherGrowsTheHostNorHoldsUpTheUsersPush() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/hostile.py", """
            import json, os, socket, threading
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            answers = {"refused": 0}
            def drain():
                for line in link.makefile("r"):
                    if '"error"' in line: answers["refused"] += 1
            def send(message):
                link.sendall((json.dumps(dict(jsonrpc="2.0", **message)) + "\\n").encode())
            send({"id": 0, "method": "\(HostMethod.hello)", "params": {"name": "hostile", "role": "notification",
                  "timeBudgetMilliseconds": 10**15}})
            threading.Thread(target=drain, daemon=True).start()
            body = "x" * 300_000
            for id in range(1, 301):
                params = {"payload": {"data": body}}
                if id % 2: params["budgetMilliseconds"] = 10**15
                send({"id": id, "method": "\(HostMethod.push)", "params": params})
            print("flooded", flush=True)
            threading.Event().wait()
            """)
        try writeFile(fixture.extensions + "/hostile.extension.json",
                      #"{"name":"hostile","role":"notification","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/hostile.py"],"activation":"always","restart":"never"}"#)
        try fixture.withHost { host in
            let idle = residentKiB(host.pid)
            // 90 MB through a debug build's parser: 17 s of CPU alone, past
            // 30 s once under CI's load (the systemd tier beside it).
            _ = try host.expectLineStarting("[hostile] flooded", timeout: 90)
            let peak = residentKiB(host.pid)
            // 300 × 300 KB held would be 90 MB and more.
            #expect(peak - idle < 48 * 1024, "idle \(idle) KiB, after the flood \(peak) KiB")
            let started = Date()
            let user = try fixture.group.run(["push", "--json", #"{"title":"Your bank code is 1234"}"#], timeout: 15)
            #expect(user.status == 0, "\(user.stderr)")
            #expect(Date().timeIntervalSince(started) < 10)
            let delivered = try #require((try fixture.group.json(user)["delivered"] as? [[String: Any]])?.first)
            #expect(delivered["modified"] as? Bool == false, "\(delivered)")
            try host.waitForError(containing: "push: 'hostile' has 8 pushes unanswered, its limit; the original content was delivered")
        }
    }

    /// A host with the notification extension that never answers attached.
    func hostWithMute() throws -> (HostFixture, TestProcess) {
        let fixture = try HostFixture()
        try addMuteNotificationExtension(fixture)
        let host = try fixture.startHost()
        do {
            _ = try host.expectLineStarting("extension 'mute' attached")
        } catch {
            host.signal(SIGTERM)
            throw error
        }
        return (fixture, host)
    }
}
