import Foundation
import Testing
import TetherRPC
import TetherLoop
import TetherTestSupport

/// What one peer may hold of a server (issue 43): work in flight, client
/// slots, answer sizes.
@Suite(.timed) struct RPCServerBoundsTests {
    static func request(_ id: Int, _ method: String) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)"}"#.utf8) + [0x0a]
    }

    /// Past `maximumInFlight` unanswered requests, nothing more of the
    /// peer's input is run: not the 65th request, nor a quick one after it.
    @Test func aPeersRequestsInFlightAreBounded() throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        client.send((1...100).flatMap { Self.request($0, "hang") } + Self.request(101, "echo"))
        // The echo waits behind the bound: no answer comes.
        #expect(client.readLine(timeout: 500) == nil)
        #expect(try server.hung == RPCConnection.maximumInFlight)
    }

    /// However fast its answers leave, a peer gets at most its quota of
    /// frames a loop turn (read, and continued): others are read between.
    /// (A written answer ran the next frames at once: 4, 16, 64 ... a
    /// turn, and a flood of 100 peers kept a new client waiting 0.5 s.)
    @Test func aPeerRunsItsQuotaOfFramesATurnHoweverFastItsAnswersLeave() throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        let count = 3_000
        client.send((1...count).flatMap { Self.request($0, "counted") })
        var answered = 0
        while answered < count, client.readLine(timeout: 10_000) != nil { answered += 1 }
        #expect(answered == count)
        let byTurn = try server.onLoop { $0.countedByTurn }
        #expect(byTurn.values.reduce(0, +) == count)
        #expect(byTurn.values.max() ?? 0 <= 2 * RPCConnection.framesPerTurn, "most in a turn: \(byTurn.values.max() ?? 0)")
    }

    /// A peer that sends flat out and never reads is read no further once
    /// its answers pile up (backpressure): it is neither cut off nor served
    /// at others' cost, and once it reads, every request has its answer.
    @Test func aFloodingPeerIsPausedNotDroppedAndOthersAreServed() throws {
        let server = try EchoServer()
        let flooder = try RawClient(path: server.path)
        defer { flooder.close() }
        // Answers of kilobytes each: without a bound, the server would queue
        // megabytes for this peer and then cut it off. In batches of 64: a
        // socket's buffer counts each send's overhead.
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"big","params":[4000]}"#.utf8) + [0x0a]
        let batch = (0..<64).flatMap { _ in request }
        // Whole requests: the last one may be cut short, and never answered.
        // The flood ends when the socket stays full 3 s: a busy machine can
        // hold the server up a second. How many the socket took depends on
        // how far the server had read when it paused (896 to 1,984 seen).
        let sent = flooder.sendWhileTaken(batch, atMost: 3_000, stall: 3_000) / request.count
        #expect(sent > 64 && sent < 3_000 * 64, "the socket took \(sent) requests")
        #expect(try server.onLoop { $0.server?.connections.values.contains { $0.isPaused } } == true,
                "the flooder is paused")
        #expect(RPCCall.perform(socketPath: server.path, method: "echo", params: [1]) == .success([1]))
        #expect(flooder.countLines(sent) == sent, "every request answered once the client reads")
    }

    /// An extension's connections (pinned) are not clients: three of them
    /// leave the one client slot free. A busy client in that slot makes
    /// the next one refused, and told why.
    @Test func pinnedConnectionsAreNoClientsAndARefusalSaysWhy() throws {
        let server = try EchoServer(limits: RPCServer.Limits(maximumConnections: 1))
        var mine: [Int32] = []
        defer { mine.forEach { close($0) } }
        for _ in 0..<3 {
            var pair: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
            mine.append(pair[0])
            let theirs = pair[1]
            try server.onLoop { box in
                _ = try? box.server?.adopt(descriptor: theirs, peer: PeerCredentials(pid: getpid(), uid: geteuid(), gid: getegid()))
            }
        }
        #expect(try server.onLoop { $0.server?.pinnedCount } == 3)
        for _ in 0..<2 {
            #expect(RPCCall.perform(socketPath: server.path, method: "echo", params: [1]) == .success([1]))
        }
        let busy = try RawClient(path: server.path)
        defer { busy.close() }
        // Its echo answered means its hang, sent first, is in flight.
        busy.send(Self.request(1, "hang") + Self.request(2, "echo"))
        #expect(busy.readLine()?.contains(#""id":2"#) == true)
        let refused = RPCCall.perform(socketPath: server.path, method: "echo", params: [2])
        #expect(refused == .failure(.remote(.refused(
            "the server is at its limit of 1 client connections"))))
    }

    /// What is held for all peers together is a running total: past the
    /// budget, the peers holding the most are closed, whoever sent last.
    @Test func pastTheReplyBudgetThePeersHoldingTheMostAreClosed() throws {
        let server = try EchoServer(limits: RPCServer.Limits(replyBudget: 1 << 20))
        let big = Array(#"{"jsonrpc":"2.0","id":1,"method":"big","params":[600000]}"#.utf8) + [0x0a]
        let readers = try (0..<4).map { _ in try RawClient(path: server.path) }
        defer { readers.forEach { $0.close() } }
        for reader in readers { reader.send(big) }
        // Four answers of 600 KB that nobody reads: more than 1 MiB held.
        #expect(RawClient.anyClosedByPeer(readers))
        #expect(try server.onLoop { $0.server?.evictedPeers ?? 0 } > 0)
        #expect(RPCCall.perform(socketPath: server.path, method: "echo", params: [1]) == .success([1]))
    }

    /// An answer over the peer's 1 MiB frame limit reaches a one-shot
    /// caller (status and metrics of a thousand extensions); one over
    /// `RPCCall.maximumAnswerSize` is a clear error, not "connection closed".
    @Test func largeAnswersPassAndTooLargeOnesSaySo() throws {
        let server = try EchoServer()
        let size = (1 << 20) + (1 << 19)
        let large = RPCCall.perform(socketPath: server.path, method: "big", params: [.integer(size)], timeoutMilliseconds: 60_000)
        #expect((try? large.get())?.stringValue?.utf8.count == size, "\(large)")

        // A peer that answers with more than that, without a newline.
        let dir = try TemporaryDirectory("tether-ipc")
        let path = dir.path + "/huge.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(listener) }
        let bound = withUnixAddress(path) { bind(listener, $0, $1) }
        #expect(bound == 0 && listen(listener, 1) == 0)
        let answerer = Thread {
            let peer = accept(listener, nil, nil)
            guard peer >= 0 else { return }
            let chunk = [UInt8](repeating: 0x78, count: 1 << 20)
            for _ in 0..<((RPCCall.maximumAnswerSize >> 20) + 2) {
                guard chunk.withUnsafeBytes({ send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 else { break }
            }
            close(peer)
        }
        answerer.start()
        let huge = RPCCall.perform(socketPath: path, method: "big", timeoutMilliseconds: 60_000)
        guard case .failure(.malformed(let why)) = huge else {
            Issue.record("an answer over the limit: \(huge)")
            return
        }
        #expect(why == "the answer was a message larger than 32 MiB, the most taken")
    }
}
