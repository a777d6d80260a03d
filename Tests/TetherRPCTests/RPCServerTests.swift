import Foundation
import Testing
import TetherRPC
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct RPCServerTests {
    /// Memory is given back after big peers end; one ending as the server
    /// closes (the host stopping) schedules nothing on the closed timer
    /// (it restarted it, and trapped the host).
    @Test func aTrimAskedForAsTheServerClosesIsNone() throws {
        let server = try EchoServer()
        let closed = try server.onLoop { box -> Bool in
            box.server?.scheduleTrim()
            box.server?.close()
            box.server?.scheduleTrim()
            box.server = nil
            return true
        }
        #expect(closed)
    }

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

    /// A client that ends its side after its requests (`socat` at the end
    /// of its input) still gets every answer, a late one too, and then the
    /// server closes; a client gone altogether is closed at once.
    @Test func aPeerThatEndsItsSideGetsEveryAnswerThenTheServerCloses() throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"later","params":[300]}"#.utf8) + [0x0a]
                    + Array(#"{"jsonrpc":"2.0","id":2,"method":"echo","params":["now"]}"#.utf8) + [0x0a])
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        #expect(client.readLine() == #"{"id":2,"jsonrpc":"2.0","result":["now"]}"#)
        #expect(client.readLine() == #"{"id":1,"jsonrpc":"2.0","result":[300]}"#)
        #expect(client.isClosedByPeer())
        // Hung up with a request in flight: nothing is kept for it.
        let gone = try RawClient(path: server.path)
        gone.send(Array(#"{"jsonrpc":"2.0","id":3,"method":"hang"}"#.utf8) + [0x0a])
        #expect(try server.eventually { $0.hung == 1 })
        gone.close()
        #expect(try server.eventually { $0.server?.connections.isEmpty == true })
    }

    /// A last request without its newline is read at the end of the
    /// peer's side; one that hangs up altogether after ending its side,
    /// with a request in flight, is closed once that answer finds it gone.
    @Test func aPeerThatEndsItsSideWithoutANewlineOrThenGoesIsServed() throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        client.send(Array(#"{"jsonrpc":"2.0","id":4,"method":"echo","params":["last"]}"#.utf8))
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        #expect(client.readLine() == #"{"id":4,"jsonrpc":"2.0","result":["last"]}"#)
        #expect(client.isClosedByPeer())
        let leaving = try RawClient(path: server.path)
        leaving.send(Array(#"{"jsonrpc":"2.0","id":5,"method":"later","params":[200]}"#.utf8) + [0x0a])
        #expect(shutdown(leaving.fd, Int32(SHUT_WR)) == 0)
        #expect(try server.eventually { $0.later.count == 1 })
        leaving.close()
        #expect(try server.eventually { $0.server?.connections.isEmpty == true })
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
