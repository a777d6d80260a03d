import Foundation
import Testing
import TetherHTTP
import TetherLoop
import TetherTestSupport

/// The client (libcurl on a loop) against a server in this process that
/// misbehaves on request (`LoopbackHTTPServer`): every rule holds, every
/// failure is one clear reason, and nothing waits past the request's deadline.
@Suite(.timed) struct HTTPClientTests {
    /// What each path answers.
    static func route(_ method: String, _ path: String) -> LoopbackHTTPServer.Answer {
        typealias Answer = LoopbackHTTPServer.Answer
        let chunk = [UInt8](repeating: 0x30, count: 65_536)
        switch path {
        case "/ok": return .json(#"{"ok": true}"#)
        case "/slow-headers": return .silence
        case "/trickle": return .trickle(head: Answer.head("200 OK", [("Content-Type", "application/json"), ("Content-Length", "100000")]))
        case "/close-mid-body": return .raw(Answer.head("200 OK", [("Content-Length", "100")]) + Array(#"{"access_"#.utf8))
        case "/big": return .stream(head: Answer.head("200 OK", [("Content-Length", "\(10 << 20)")]), chunk: chunk, count: 160)
        case "/big-chunked":
            return .stream(head: Answer.head("200 OK", [("Transfer-Encoding", "chunked")]),
                           chunk: Array("10000\r\n".utf8) + chunk + Array("\r\n".utf8), count: 160)
        case "/bad-chunked": return .raw(Answer.head("200 OK", [("Transfer-Encoding", "chunked")]) + Array("zz\r\nhello\r\n0\r\n\r\n".utf8))
        case "/redirect": return .reply(status: 302, headers: [("Location", "/ok")])
        case "/garbage": return .raw(Array("NOT HTTP AT ALL\r\n\r\n".utf8))
        default: return .reply(status: 404)
        }
    }

    static func server() throws -> LoopbackHTTPServer { try LoopbackHTTPServer(route: route) }

    /// A client on a loop thread of its own, shut down afterwards. The test's
    /// own code runs on another loop thread (a task executor), so tests that
    /// block Swift's small shared pool meanwhile cannot stall it.
    static func withClient<T: Sendable>(_ body: @Sendable (HTTPClient) async throws -> T) async throws -> T {
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        return try await withTaskExecutorPreference(try Self.runner()) { try await body(HTTPClient(loop: thread.loop)) }
    }

    /// Where the tests' own async code runs: a loop thread for the whole suite.
    static let runnerThread = try? EventLoopThread()
    static func runner() throws -> LoopTaskExecutor {
        guard let loop = runnerThread?.loop else { throw TestTimeout(what: "a runner thread") }
        return loop.taskExecutor
    }

    /// A request to `/slow-headers` in a task of its own, returned once the
    /// server has it; the task ends with the failure (nil: none) and when.
    func slowRequest(_ client: HTTPClient, to server: LoopbackHTTPServer) async throws -> Task<(HTTPFailure?, Date), Never> {
        let task = Task(executorPreference: try Self.runner()) { () -> (HTTPFailure?, Date) in
            do throws(HTTPFailure) {
                _ = try await client.send(HTTPRequest("GET", server.baseURL + "/slow-headers", timeout: 60))
                return (nil, Date())
            } catch {
                return (error, Date())
            }
        }
        guard try await offThePool({ server.waitForRequest("/slow-headers") }) else {
            throw TestTimeout(what: "the server to read the request")
        }
        return task
    }

    /// The failure `request` ends with, and how long it took, in seconds.
    static func failure(of request: HTTPRequest) async throws -> (HTTPFailure?, Double) {
        try await Self.withClient { client in
            let start = Date()
            do throws(HTTPFailure) {
                _ = try await client.send(request)
                return (nil, Date().timeIntervalSince(start))
            } catch {
                return (error, Date().timeIntervalSince(start))
            }
        }
    }

    @Test func aGoodAnswerArrivesWithItsStatusAndBody() async throws {
        let server = try Self.server()
        let response = try await Self.withClient { try await $0.send(HTTPRequest("POST", server.baseURL + "/ok", body: Array("x=1".utf8))) }
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok": true}"#)
    }

    /// The total deadline cuts off a server that never answers and one that
    /// sends its headers, then a byte a second: neither can hold a caller
    /// (and a refresh lock) past it.
    @Test(.waits, arguments: ["/slow-headers", "/trickle"])
    func theDeadlineCutsOffSlowServers(_ path: String) async throws {
        let server = try Self.server()
        let (failure, seconds) = try await Self.failure(of: HTTPRequest("GET", server.baseURL + path, timeout: 2))
        #expect(failure == .timedOut)
        #expect(seconds >= 1.9 && seconds < 6, "took \(seconds) s")
    }

    @Test(arguments: [
        ("/close-mid-body", HTTPFailure.failed("the connection was lost")),
        ("/big", .tooLarge(limit: 1 << 20)),
        ("/big-chunked", .tooLarge(limit: 1 << 20)),
        ("/bad-chunked", .failed("the connection was lost")),
        ("/garbage", .failed("the server's answer was malformed")),
    ])
    func aBrokenAnswerIsOneClearFailure(_ path: String, _ expected: HTTPFailure) async throws {
        let server = try Self.server()
        let (failure, _) = try await Self.failure(of: HTTPRequest("GET", server.baseURL + path, timeout: 20, maximumBody: 1 << 20))
        #expect(failure == expected)
    }

    /// A redirect is the answer, not followed: a credential goes only where it was meant to.
    @Test func redirectsAreNotFollowed() async throws {
        let server = try Self.server()
        let response = try await Self.withClient { try await $0.send(HTTPRequest("GET", server.baseURL + "/redirect")) }
        #expect(response.status == 302)
        #expect(server.counts["/ok"] == nil)
    }

    @Test func aClosedPortIsRefused() async throws {
        let port = try LoopbackSocket.unusedPort()
        let (failure, _) = try await Self.failure(of: HTTPRequest("GET", "http://127.0.0.1:\(port)/", timeout: 20))
        #expect(failure == .refused)
    }

    /// Nothing but http(s), and no header that could smuggle another one.
    @Test(arguments: [
        (HTTPRequest("GET", "file:///etc/passwd"), HTTPFailure.badURL),
        (HTTPRequest("GET", "ftp://127.0.0.1/x"), .badURL),
        (HTTPRequest("GET", "http://127.0.0.1/a b"), .badURL),
        (HTTPRequest("GET", "http://127.0.0.1/", headers: [("Authorization", "Bearer x\r\nX-Evil: 1")]),
         .badRequest("a header holds a control character")),
        (HTTPRequest("get", "http://127.0.0.1/"), .badRequest("the method is not an HTTP method")),
    ])
    func requestsThatBreakTheRulesAreNotSent(_ request: HTTPRequest, _ expected: HTTPFailure) async throws {
        let (failure, _) = try await Self.failure(of: request)
        #expect(failure == expected)
    }

    /// The error text never carries what was sent: a header value (an
    /// access token among them) that the client refuses stays out of it.
    @Test func aRefusedHeaderValueNeverReachesTheErrorText() async throws {
        let (failure, _) = try await Self.failure(of: HTTPRequest("GET", "http://127.0.0.1:9/x",
                                                             headers: [("Authorization", "Bearer tok\u{1}SECRET-TOKEN")]))
        #expect(failure != nil && !"\(failure.map { "\($0)" } ?? "")".contains("SECRET"))
    }

    /// 100 requests at once from one process, all on the one loop.
    @Test func aHundredConcurrentRequestsAllComplete() async throws {
        let server = try Self.server()
        let statuses = try await Self.withClient { client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 { group.addTask { try await client.send(HTTPRequest("GET", server.baseURL + "/ok")).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(statuses.count == 100 && statuses.allSatisfy { $0 == 200 })
        #expect(server.counts["/ok"] == 100)
    }

    /// A cancelled task's request ends at once, not at its deadline.
    @Test func cancellingTheTaskEndsTheRequest() async throws {
        let server = try Self.server()
        let (failure, seconds) = try await Self.withClient { client in
            // Cancelled once the server has the request.
            let task = try await slowRequest(client, to: server)
            let start = Date()
            task.cancel()
            let (failure, end) = await task.value
            return (failure, end.timeIntervalSince(start))
        }
        #expect(failure == .cancelled)
        #expect(seconds < 5, "took \(seconds) s")
    }

    /// The request's socket is close-on-exec (invariant 1): a child the
    /// process starts meanwhile (the host launching an extension during a
    /// refresh) never inherits a connection to the token server.
    @Test func theRequestsSocketIsCloseOnExec() async throws {
        let server = try Self.server()
        let flags = try await Self.withClient { client in
            let task = try await slowRequest(client, to: server)
            let flags = Self.descriptors(connectedToPort: server.port).map { fcntl($0, F_GETFD) }
            task.cancel()
            _ = await task.value
            return flags
        }
        #expect(!flags.isEmpty, "no descriptor of this process is connected to the server")
        #expect(flags.allSatisfy { $0 >= 0 && $0 & FD_CLOEXEC != 0 }, "\(flags)")
    }

    /// This process's descriptors whose TCP socket's peer is 127.0.0.1:`port`
    /// (asked of each socket: /proc/net/tcp is long on a busy machine).
    static func descriptors(connectedToPort port: Int) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap(Int32.init).filter { fd in
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let asked = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
            }
            return asked && peer.sin_family == sa_family_t(AF_INET) && Int(UInt16(bigEndian: peer.sin_port)) == port
                && peer.sin_addr.s_addr == inet_addr("127.0.0.1")
        }
    }

    /// A loop that stops under a running request ends it: the caller never waits forever.
    @Test func aStoppingLoopEndsItsRequests() async throws {
        try await withTaskExecutorPreference(try Self.runner()) { try await stoppingLoop() }
    }

    private func stoppingLoop() async throws {
        let server = try Self.server()
        let thread = try EventLoopThread()
        let client = HTTPClient(loop: thread.loop)
        let task = try await slowRequest(client, to: server)
        thread.shutdown()
        #expect(try await within(20, "the running request to end") { await task.value.0 } == .cancelled)
        // After the loop is gone, a request fails at once: its task, which
        // prefers the finished loop, still runs (on Swift's pool).
        let after = try await within(20, "a request after the stop to end") { () -> HTTPFailure? in
            do throws(HTTPFailure) {
                _ = try await client.send(HTTPRequest("GET", server.baseURL + "/ok"))
                return nil
            } catch {
                return error
            }
        }
        #expect(after == .cancelled)
    }
}
