import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// Invariant 11, peers: ceilings with clear refusals, and an abusive peer is
/// disconnected rather than served at the cost of the others.
@Suite(.timed) struct HostPeerTests {
    func hostPID(_ fixture: HostFixture) throws -> Int32 {
        Int32(try #require(try fixture.status()["pid"] as? Int))
    }

    func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Raises this process's soft descriptor limit, so it can play 1,100 clients.
    func raiseOwnDescriptorLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    @Test func elevenHundredIdleConnectionsUnderATenTwentyFourLimitCannotLockStatusOut() throws {
        raiseOwnDescriptorLimit()
        let fixture = try HostFixture()
        try fixture.addExtension("steady", restart: "always", script: #"echo "pid $$"; exec sleep 1000"#)
        let tether = tetherExecutable
        // The hard limit too: the host cannot raise its way out.
        let host = try TestProcess("/bin/sh", ["-c", "ulimit -n 1024 && exec '\(tether)' host --group '\(fixture.group.path)'"
                                                + " --extensions-dir '\(fixture.extensions)' --grace 2"])
        _ = try host.expectLineStarting("tether host ready")
        let extensionPID = try #require(startedPID("steady", in: try host.expectLineStarting("[steady] pid")))

        var clients: [RawClient] = []
        for _ in 0..<1_100 { clients.append(try fixture.rawClient()) }
        // The extension crashes while descriptors are scarce: it must come back, not be marked failed.
        kill(extensionPID, SIGKILL)
        _ = try host.expectLineStarting("[steady] pid")

        let status = try fixture.status()
        let entry = (status["extensions"] as? [[String: Any]])?.first
        #expect(entry?["state"] as? String == "running")
        #expect(entry?["restarts"] as? Int == 1)
        #expect((status["connections"] as? Int ?? 0) <= 256)
        #expect((status["evictedConnections"] as? Int ?? 0) >= 1_100 - 256)
        for client in clients { client.close() }
        #expect(try host.stop() == 0)
    }

    @Test(.long) func hundredClientsThatNeverReadCannotGrowTheHostWithoutBound() throws {
        raiseOwnDescriptorLimit()
        let fixture = try HostFixture()
        let host = try fixture.startHost()
        let pid = host.pid
        _ = try fixture.status()
        let idle = residentKiB(pid)
        // Each push is answered at once with its 100 KB payload (no
        // notification extension); nobody reads the answers.
        let payload = String(repeating: "x", count: 100_000)
        let request = Array((#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.push)","params":{"payload":{"data":""#
            + payload + "\"}}}\n").utf8)
        var clients: [RawClient] = []
        var peak = idle
        for _ in 0..<100 {
            let client = try fixture.rawClient()
            // As fast as the host takes them: it stops reading a peer whose
            // answers pile up (backpressure), and a blocking send would wait.
            _ = client.sendWhileTaken(request, atMost: 20, stall: 50)
            clients.append(client)
            peak = max(peak, residentKiB(pid))
        }
        let status = try fixture.status()
        peak = max(peak, residentKiB(pid))
        // Each peer is read no further once its answers pile up
        // (backpressure); the total budget's evictions are proven in
        // RPCServerBoundsTests, where they do not hang on the machine's speed.
        _ = status
        // 100 clients × 2 MB of answers: without a budget the host grows by 200 MB or more.
        #expect(peak - idle < 80 * 1024, "peak \(peak) KiB vs idle \(idle) KiB")
        for client in clients { client.close() }
        // Memory goes back (malloc_trim a second after the abuse ends).
        var after = residentKiB(pid)
        let deadline = TestTimeout.deadline(after: 10)
        while after - idle > 16 * 1024, Date() < deadline {
            _ = try fixture.status()  // a real request per round; bounded by the deadline
            after = residentKiB(pid)
        }
        print("host RSS: idle \(idle) KiB, peak \(peak) KiB, after \(after) KiB")
        #expect(after - idle < 16 * 1024, "after \(after) KiB vs idle \(idle) KiB")
        #expect(try host.stop() == 0)
    }

    /// Clients that never read what they asked for: one gone before the
    /// stop (its end schedules memory given back), one still connected as
    /// the host stops. Closing the second on the way down must not trap the
    /// host (it did: the schedule restarted the closed server's timer).
    @Test func aHostStopsCleanlyWhileAClientHoldsUnreadAnswers() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHost()
        _ = try fixture.status()
        let payload = String(repeating: "x", count: 100_000)
        let request = Array((#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.push)","params":{"payload":{"data":""#
            + payload + "\"}}}\n").utf8)
        let gone = try fixture.rawClient(), holding = try fixture.rawClient()
        var goneIsOpen = true
        defer {
            holding.close()
            if goneIsOpen { gone.close() }
        }
        for client in [gone, holding] {
            #expect(client.sendWhileTaken(request, atMost: 20, stall: 50) >= request.count * 2)
        }
        // Requests on another connection: the host has read and answered
        // what it took of both, then heard the first end.
        for _ in 0..<3 { _ = try fixture.status() }
        gone.close()
        goneIsOpen = false
        for _ in 0..<3 { _ = try fixture.status() }
        #expect(try host.stop() == 0)
    }

    @Test func pushesToAnExtensionThatNeverAnswersLeaveNoPendingCalls() throws {
        let fixture = try HostFixture()
        try addMuteNotificationExtension(fixture)
        let host = try fixture.startHost()
        // Its own line and the host's "attached" line may come in either order.
        _ = try host.expectLineStarting("extension 'mute' attached")
        let pushes = try (0..<5).map { index in
            try fixture.group.start(["push", "--budget", "0.2", "--json", #"{"title":"n\#(index)"}"#])
        }
        for push in pushes { #expect(try push.waitForExit(timeout: 20) == 0) }
        let entry = (try fixture.status()["extensions"] as? [[String: Any]])?.first
        #expect(entry?["attached"] as? Bool == true)
        #expect(entry?["pendingCalls"] as? Int == 0, "each push past its budget cancelled its call")
        #expect(try host.stop() == 0)
    }
}

/// The ceilings that are flags or fixed numbers, each refused clearly.
@Suite(.timed) struct HostCeilingTests {
    func call(_ client: RawClient, _ method: String, _ params: String? = nil, id: Int = 1) throws -> [String: Any] {
        let withParams = params.map { #","params":\#($0)"# } ?? ""
        client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)"\#(withParams)}"#.utf8) + [0x0a])
        // Notifications may come first: the answer has our id.
        for _ in 0..<16 {
            let line = try #require(client.readLine())
            let message = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if message["id"] as? Int == id { return message }
        }
        throw TestTimeout(what: "the answer to \(method)")
    }

    /// `--max-connections 3`: the least recently active idle peer makes
    /// room; a peer with a request in flight is busy, not idle, and stays.
    @Test func aFullHostClosesTheLeastRecentlyActiveIdlePeerButNeverABusyOne() throws {
        let fixture = try HostFixture()
        try addMuteNotificationExtension(fixture)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions,
                                                             "--max-connections", "3"]))
        _ = try host.expectLineStarting("extension 'mute' attached")
        let socket = fixture.group.path + "/host.sock"
        // The busy peer: its push waits on an extension that never answers.
        let busy = try RawClient(path: socket)
        busy.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.push)","params":{"payload":{"t":1},"budgetMilliseconds":20000}}"#.utf8) + [0x0a])
        let idle = try (0..<2).map { _ in try RawClient(path: socket) }
        _ = try call(idle[1], HostMethod.ping)  // idle[0] is now the least recently active idle peer
        // The busy peer and two idle ones fill the host (the extension's
        // link is no client): a fourth (status) makes one idle peer go.
        let status = try fixture.status()
        #expect(status["evictedConnections"] as? Int == 1)
        let goodbye = idle[0].readLine(timeout: 5_000)
        #expect(goodbye?.contains(#""method":"\#(HostNotification.disconnecting)""#) == true, "told why: \(goodbye ?? "nothing")")
        #expect(idle[0].isClosedByPeer(timeout: 5_000), "the least recently active idle peer was closed")
        #expect(try call(idle[1], HostMethod.ping, id: 2)["result"] != nil)
        let entry = (status["extensions"] as? [[String: Any]])?.first
        #expect(entry?["attached"] as? Bool == true, "an extension's connection is never evicted")
        busy.close()
        for client in idle { client.close() }
        #expect(try host.stop() == 0)
    }
}

/// A notification extension in Python that says hello and never answers.
func addMuteNotificationExtension(_ fixture: HostFixture) throws {
    let script = """
        import json, os, socket
        s = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
        f = s.makefile("rw", encoding="utf-8", newline="\\n")
        f.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "\(HostMethod.hello)",
                            "params": {"name": os.environ["TETHER_EXTENSION"], "role": "notification"}}) + "\\n")
        f.flush()
        for line in f:
            pass  # never answers a push
        """
    try writeFile(fixture.extensions + "/mute.py", script)
    try fixture.addExtension("mute", role: "notification", restart: "never", script: "exec python3 \"$(dirname \"$0\")/mute.py\"")
}
