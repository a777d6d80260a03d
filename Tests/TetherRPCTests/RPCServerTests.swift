import Foundation
import Testing
import TetherRPC
import TetherLoop
import TetherTestSupport

/// An echo server on its own loop thread, for one test. Loop closures
/// capture only `Box`, so the fixture is always released on the test's thread.
final class EchoServer: @unchecked Sendable {
    let thread: EventLoopThread
    let dir: TemporaryDirectory
    let path: String
    private let box = Box()

    final class Box: @unchecked Sendable {
        var server: RPCServer?
        /// "hang" requests received, never answered.
        var hung = 0
        /// Loop turns counted while "counted" requests run (a job each
        /// turn, queued by the turn's first such request), and how many
        /// ran in each turn.
        var turn = 0
        var ticking = false
        var countedByTurn: [Int: Int] = [:]
        /// The timers of "later" requests, open until the loop ends.
        var later: [LoopTimer] = []
        /// The connection of the last "twice" request.
        var connection: RPCConnection?
    }

    /// Methods: echo, uid, hang (never answered), big (a string of
    /// `params` bytes), counted (an echo counted by loop turn), later (an
    /// echo answered after the first of `params` milliseconds), twice (an
    /// echo its handler answers twice).
    init(limits: RPCServer.Limits = .init(), goodbye: String? = nil) throws {
        // As the host does: a peer gone mid-answer is an error, not a signal.
        signal(SIGPIPE, SIG_IGN)
        thread = try EventLoopThread()
        dir = try TemporaryDirectory("tether-ipc")
        path = dir.path + "/s.sock"
        let loop = thread.loop
        let (path, box) = (self.path, self.box)
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        loop.execute {
            do {
                box.server = try RPCServer(loop: loop, path: path, limits: limits, goodbye: goodbye) { connection, method, params, respond in
                    switch method {
                    case "echo": respond(.success(params ?? .null))
                    case "twice":
                        box.connection = connection
                        respond(.success(params ?? .null))
                        respond(.success(params ?? .null))
                    case "uid": respond(.success(.integer(geteuid())))
                    case "hang": box.hung += 1
                    case "counted":
                        box.countedByTurn[box.turn, default: 0] += 1
                        if !box.ticking {
                            // Jobs queued while jobs run wait for the next turn.
                            box.ticking = true
                            loop.execute {
                                box.turn += 1
                                box.ticking = false
                            }
                        }
                        respond(.success(params ?? .null))
                    case "later":
                        let timer = LoopTimer(loop: loop)
                        box.later.append(timer)
                        let milliseconds = UInt64(clamping: params?.arrayValue?.first?.intValue ?? 0)
                        timer.start(afterMilliseconds: milliseconds) { respond(.success(params ?? .null)) }
                    case "big": respond(.success(.string(String(repeating: "x", count: params?.arrayValue?.first?.intValue ?? 0))))
                    default: respond(.failure(.methodNotFound(method)))
                    }
                }
            } catch {
                failure = error
            }
            ready.signal()
        }
        ready.wait()
        if let failure { throw failure }
    }

    var refusedPeers: Int {
        get throws { try onLoop { $0.server?.refusedPeers ?? -1 } }
    }

    var hung: Int {
        get throws { try onLoop { $0.hung } }
    }

    /// `body` on the server's loop, waited for.
    func onLoop<T>(_ body: @escaping (Box) -> T) throws -> T {
        let box = self.box
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var value: T?
        nonisolated(unsafe) let body = body
        thread.loop.execute { value = body(box); done.signal() }
        guard done.wait(timeout: .now() + 10) == .success, let value else { throw TestTimeout(what: "the server loop") }
        return value
    }

    deinit { thread.shutdown() }
}

@Suite(.timed) struct RPCServerTests {
    @Test func oneShotCallRoundTrips() throws {
        let server = try EchoServer()
        let result = RPCCall.perform(socketPath: server.path, method: "echo", params: ["x": [1, "two"]])
        #expect(result == .success(["x": [1, "two"]]))
        #expect(RPCCall.perform(socketPath: server.path, method: "nope") == .failure(.remote(.methodNotFound("nope"))))
    }

    @Test func socketIsOwnerOnly() throws {
        let server = try EchoServer()
        let mode = try FileManager.default.attributesOfItem(atPath: server.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func garbageGetsAnErrorAndTheConnectionStaysUsable() throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        client.send(Array("hello there\n".utf8))
        let error = try #require(client.readLine())
        #expect(error.contains("-32700"))
        client.send(Array(#"{"jsonrpc":"2.0","id":9,"method":"echo","params":["ok"]}"#.utf8) + [0x0a])
        #expect(client.readLine() == #"{"id":9,"jsonrpc":"2.0","result":["ok"]}"#)
    }

    @Test func randomBytesHalfFramesAndOversizedFramesNeverTakeTheServerDown() throws {
        let server = try EchoServer()
        // 2 MiB of random bytes: disconnected (too many bad frames or one too large).
        let random = try RawClient(path: server.path)
        var generator = SystemRandomNumberGenerator()
        random.send((0..<(2 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(random.isClosedByPeer())
        random.close()
        // Half a frame, then hang up.
        let half = try RawClient(path: server.path)
        half.send(Array(#"{"jsonrpc":"2.0","id":1,"meth"#.utf8))
        half.close()
        // One frame over 1 MiB with no newline: disconnected.
        let big = try RawClient(path: server.path)
        big.send([UInt8](repeating: 0x20, count: (1 << 20) + 10))
        #expect(big.isClosedByPeer())
        big.close()
        // The server still answers.
        #expect(RPCCall.perform(socketPath: server.path, method: "echo", params: [1]) == .success([1]))
    }

    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                   "needs root, setpriv and python3 to connect as another user"))
    func peerOfAnotherUserIsDisconnectedUnanswered() throws {
        let server = try EchoServer()
        // Open the way for the test only: the socket is 0600 in a 0700 directory.
        chmod(server.dir.path, 0o755)
        chmod(server.path, 0o666)
        let script = """
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.connect("\(server.path)")
            try:
                s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"uid"}\\n')
                answer = s.recv(4096).decode()
            except ConnectionError:  # reset or broken pipe: closed on us
                answer = ""
            print("answer:" + answer)
            """
        let result = try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                          "/usr/bin/python3", "-c", script])
        #expect(result.stdout == "answer:\n", "closed without an answer: \(result.stdout) \(result.stderr)")
        #expect(try server.refusedPeers == 1)
        #expect(RPCCall.perform(socketPath: server.path, method: "uid") == .success(0))
    }

    /// A handler that answers twice (a timer and a reply racing, say): the
    /// peer gets one response, and the request counts as answered once, so
    /// the peer's requests in flight are none again.
    @Test func aRequestIsAnsweredOnceHoweverOftenItsHandlerResponds() throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"twice","params":[1]}"#.utf8) + [0x0a]
                    + Array(#"{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}"#.utf8) + [0x0a])
        let first = try #require(client.readLine()), second = try #require(client.readLine())
        #expect(first.contains(#""id":1"#) && second.contains(#""id":2"#), "\(first) \(second)")
        #expect(try server.onLoop { $0.connection?.unansweredRequests } == 0)
    }
}
