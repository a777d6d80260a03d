import Foundation
import Testing
import TetherJSON
import TetherLoop
import TetherRPC
import TetherTestSupport

/// The command line's one-shot call against a host socket that misbehaves
/// (a server of the test's own, on a thread): each ends in one outcome,
/// within its bound, its memory bounded by the largest answer taken.
@Suite(.timed) struct RPCCallTests {
    /// A Unix socket that reads the caller's request, then sends `answer`
    /// (given the request's line) and holds the connection until the caller goes.
    static func call(answering answer: @escaping @Sendable (String) -> [UInt8],
                     timeoutMilliseconds: UInt64 = 5_000) throws -> Result<JSONValue, RPCCallError> {
        let directory = try TemporaryDirectory("tether-call")
        let path = directory.path + "/host.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(listener >= 0)
        var address = sockaddr_un()
        try #require(path.utf8.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 1) == 0)
        try DetachedThread.start {
            defer { close(listener) }
            // Bounded: a call that never connects leaves no thread behind.
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 30_000) == 1 else { return }
            let peer = accept(listener, nil, nil)
            guard peer >= 0 else { return }
            defer { close(peer) }
            var line: [UInt8] = [], byte: UInt8 = 0
            while line.count < 65_536, recv(peer, &byte, 1, 0) == 1, byte != 0x0A { line.append(byte) }
            let bytes = answer(String(decoding: line, as: UTF8.self))
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return }
                offset += sent
            }
            // Held until the caller closes (or a bound of the test's).
            var pending = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            while poll(&pending, 1, 20_000) == 1, recv(peer, &byte, 1, 0) == 1 {}
        }
        return RPCCall.perform(socketPath: path, method: "ping", timeoutMilliseconds: timeoutMilliseconds)
    }

    /// The request's id, as the server must answer it.
    static func id(_ request: String) -> String {
        (try? JSONCodec.parse(Array(request.utf8)))?["id"].map { String(decoding: JSONCodec.serialize($0), as: UTF8.self) } ?? "0"
    }

    @Test func anAnswerToAnotherIdIsNotTheAnswer() throws {
        let outcome = try Self.call { request in
            Array(#"{"jsonrpc":"2.0","id":9999,"result":"not yours"}"#.utf8) + [0x0A]
                + Array(#"{"jsonrpc":"2.0","id":\#(Self.id(request)),"result":"pong"}"#.utf8) + [0x0A]
        }
        #expect(outcome == .success("pong"))
    }

    /// A request from the host to the caller is refused, and the caller's
    /// own answer still counts.
    @Test func aRequestFromTheHostIsRefusedAndTheAnswerStillComes() throws {
        let outcome = try Self.call { request in
            Array(#"{"jsonrpc":"2.0","id":"h1","method":"steal","params":{}}"#.utf8) + [0x0A]
                + Array(#"{"jsonrpc":"2.0","id":\#(Self.id(request)),"result":"pong"}"#.utf8) + [0x0A]
        }
        #expect(outcome == .success("pong"))
    }

    /// An answer larger than any the caller takes (33 MiB without a line's
    /// end): the call ends saying so, without reading it to its end.
    @Test func anAnswerPastTheLargestTakenEndsTheCall() throws {
        // Bounded generously: 33 MiB through a socket takes seconds on a loaded machine.
        let outcome = try Self.call(answering: { _ in [UInt8](repeating: 0x20, count: RPCCall.maximumAnswerSize + (1 << 20)) },
                                    timeoutMilliseconds: 120_000)
        guard case .failure(.malformed(let error)) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect("\(error)".contains("larger than 32 MiB"), "\(error)")
    }

    /// A socket that answers what is not JSON-RPC: the call ends at once,
    /// saying so (it waited out its whole timeout before).
    @Test(arguments: ["not json at all", #"{"jsonrpc":"2.0","id":"#, #"{"jsonrpc":"1.0","result":7}"#, "\u{1b}[2J"])
    func aGarbledAnswerEndsTheCallAtOnce(_ answer: String) throws {
        let started = MonotonicClock.nanoseconds()
        let outcome = try Self.call(answering: { _ in Array(answer.utf8) + [0x0A] }, timeoutMilliseconds: 20_000)
        #expect(outcome == .failure(.malformed("what came back is not JSON-RPC")), "\(outcome)")
        #expect((MonotonicClock.nanoseconds() - started) / 1_000_000 < 10_000)
    }

    /// A host that never answers: the call ends at its bound.
    @Test func aHostThatNeverAnswersTimesOut() throws {
        let started = MonotonicClock.nanoseconds()
        let outcome = try Self.call(answering: { _ in [] }, timeoutMilliseconds: 300)
        #expect(outcome == .failure(.timedOut))
        #expect((MonotonicClock.nanoseconds() - started) / 1_000_000 < 5_000)
    }
}
