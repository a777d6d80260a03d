import Dispatch
import Glibc
import Testing
import TetherJSON
import TetherLoop
import TetherRPC
import TetherTestSupport

/// The goodbye a server sends before it closes a peer: JSON-RPC has none,
/// so the transport takes its name from whoever serves (Tether's schema
/// says `host.disconnecting`) and knows none of its own.
@Suite(.timed) struct RPCGoodbyeTests {
    /// A client closed to make room is told why first, under the name the
    /// server was given.
    @Test func anEvictedClientIsToldWhyUnderTheGivenName() throws {
        let server = try EchoServer(limits: RPCServer.Limits(maximumConnections: 1), goodbye: "bye")
        let idle = try RawClient(path: server.path)
        defer { idle.close() }
        idle.send(RPCServerBoundsTests.request(1, "echo"))
        #expect(idle.readLine()?.contains(#""id":1"#) == true)
        // A second client: the idle one makes room, and hears why.
        #expect(RPCCall.perform(socketPath: server.path, method: "echo", params: [1]) == .success([1]))
        let goodbye = idle.readLine()
        #expect(goodbye?.contains(#""method":"bye""#) == true, "\(goodbye ?? "nothing")")
        #expect(goodbye?.contains("client connections") == true, "\(goodbye ?? "nothing")")
        #expect(idle.isClosedByPeer())
    }

    /// A call still waiting when the peer says goodbye and closes fails
    /// with the goodbye's reason, not a bare "connection closed".
    @Test func aCallWaitingFailsWithTheGoodbyesReason() throws {
        let outcome = try Self.outcomeOfAWaitingCall { peer in
            peer.send(Array(#"{"jsonrpc":"2.0","method":"bye","params":{"reason":"the server is full"}}"#.utf8) + [0x0a])
            peer.close()
            return true
        }
        #expect(outcome == .failure(.refused("the server is full")))
    }

    /// A call still waiting when the peer ends its side (`shutdown(SHUT_WR)`)
    /// but still reads fails at once: no answer can come, and the
    /// connection stays open only to write the peer's own answers.
    @Test func aCallWaitingWhenThePeerEndsItsSideFailsAtOnce() throws {
        let outcome = try Self.outcomeOfAWaitingCall { peer in
            #expect(shutdown(peer.fd, Int32(SHUT_WR)) == 0)
            return false
        }
        #expect(outcome == .failure(.internalError("the peer ended its side")))
    }

    /// A connection on one end of a socket pair calls `wait`; once the
    /// request is read at the other end, `peerDoes` acts there (and says
    /// whether it closed it). What the call ended with, within 10 s.
    static func outcomeOfAWaitingCall(peerDoes: (RawClient) -> Bool) throws -> Result<JSONValue, RPCError>? {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let peer = RawClient(descriptor: pair[1])
        var closed = false
        defer { if !closed { peer.close() } }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let answered = DispatchSemaphore(value: 0)
        let held = Held()
        let (loop, mine) = (thread.loop, pair[0])
        loop.execute {
            guard let stream = try? PipeStream.adopting(loop: loop, fileDescriptor: mine) else {
                answered.signal()
                return
            }
            let made = RPCConnection(stream: stream, goodbye: "bye")
            held.connection = made
            made.start(handler: { _, _, _, _ in })
            made.call("wait", nil) { result in
                held.outcome = result
                answered.signal()
            }
        }
        #expect(peer.readLine()?.contains(#""method":"wait""#) == true)
        closed = peerDoes(peer)
        try #require(answered.wait(timeout: .now() + 10) == .success)
        let outcome = held.outcome
        loop.execute { held.connection = nil }
        return outcome
    }

    /// What the loop's side keeps: the stream holds its connection weakly.
    final class Held: @unchecked Sendable {
        var connection: RPCConnection?
        var outcome: Result<JSONValue, RPCError>?
    }
}
