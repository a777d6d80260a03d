import Dispatch
import Glibc
import Synchronization
import Testing
import TetherGroup
import TetherIPC
import TetherLoop
import TetherTestSupport
@testable import TetherExtension

/// The hello a keyboard without open access says before it confines
/// itself, against a stand-in host in this process (its lock held, its
/// socket served by hand, so it can send what a host would not).
@Suite(.timed) struct EarlyAttachmentTests {
    /// A socket that takes one connection, reads its first line, writes
    /// `reply` in one piece and keeps the connection open.
    final class StandInHost: @unchecked Sendable {
        private let listener: Int32
        /// The connection taken, and the hello said on it.
        final class Taken: Sendable {
            let value = Mutex<(peer: Int32, hello: [UInt8])>((-1, []))
        }
        private let taken = Taken()
        var hello: [UInt8] { taken.value.withLock { $0.hello } }

        init(path: String, reply: [UInt8]) throws {
            try #require(path.utf8.count < 108, "\(path) is too long for a socket's address")
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            self.listener = listener
            try #require(listener >= 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(bound == 0 && listen(listener, 1) == 0)
            // Not `self`: a host nobody connects to is let go, and its
            // deinit's shutdown ends the accept.
            let taken = self.taken
            try DetachedThread.start {
                let peer = accept(listener, nil, nil)
                guard peer >= 0 else { return }
                var hello: [UInt8] = [], byte: UInt8 = 0
                while recv(peer, &byte, 1, 0) == 1 {
                    hello.append(byte)
                    if byte == 0x0a { break }
                }
                taken.value.withLock { $0 = (peer, hello) }
                _ = reply.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }

        deinit {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            let peer = taken.value.withLock { $0.peer }
            if peer >= 0 { close(peer) }
        }
    }

    /// A group whose host lock is held, as a running host's is.
    struct Stage {
        let scratch: TemporaryDirectory
        let group: GroupDirectory
        let hostLock: LivenessLock
        let hostLockPath: String

        init() throws {
            scratch = try TemporaryDirectory("tether-early")
            try #require(mkdir(scratch.group, 0o700) == 0)
            group = try GroupDirectory(path: scratch.group)
            hostLockPath = try group.preparedLockPath(for: .host)
            hostLock = try #require(try LivenessLock.tryAcquire(path: hostLockPath, label: "host"))
        }

        func attach() -> EarlyAttachment.Outcome {
            EarlyAttachment.attach(socketPath: group.socketPath, hostLockPath: hostLockPath, hello: ["name": "keys"])
        }
    }

    static let answerID = JSONValue.string("hello-before-confinement")

    static func answer(pid: Int32, openAccess: Bool) -> [UInt8] {
        RPCMessage.response(id: answerID, result: .success(HelloAnswer(
            hostPID: pid, group: "", managed: false, openAccess: openAccess, timeBudgetMilliseconds: nil,
            protocolVersion: HostProtocol.current, capabilities: [], events: []).json)).encoded()
    }

    /// What comes before the answer (garbage, a notification) is passed
    /// over; what follows it in the same write is not read: it is the
    /// link's, whose loop reads the descriptor next.
    @Test func whatFollowsTheAnswerIsLeftForTheLink() throws {
        let stage = try Stage()
        defer { stage.hostLock.release() }
        let after = Array(#"{"jsonrpc":"2.0","method":"after","params":[1]}"#.utf8) + [0x0a]
        let host = try StandInHost(path: stage.group.socketPath, reply: Array("not JSON at all\n".utf8)
            + Array(#"{"jsonrpc":"2.0","method":"before","params":[]}"#.utf8) + [0x0a]
            + Self.answer(pid: 42, openAccess: true) + after)
        guard case .attached(let descriptor, let pid, let openAccess) = stage.attach() else {
            Issue.record("not attached")
            return
        }
        defer { close(descriptor) }
        #expect(pid == 42 && openAccess)
        #expect(String(decoding: host.hello, as: UTF8.self).contains(HostMethod.hello))
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        try #require(poll(&ready, 1, 5_000) == 1, "what followed the answer was consumed")
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let got = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        #expect(got > 0 && Array(buffer[..<got]) == after)
    }

    /// A host that speaks another protocol: incompatible (the keyboard
    /// says so and exits); any other refusal, or an answer that names no
    /// host: unattached, with why.
    @Test func refusalsSayWhy() throws {
        let cases: [([UInt8], String)] = [
            (RPCMessage.response(id: Self.answerID, result: .failure(RPCError(
                code: RPCError.unsupportedProtocolCode, message: "speak 99"))).encoded(), "incompatible: the host refused this extension: speak 99"),
            (RPCMessage.response(id: Self.answerID, result: .failure(RPCError(code: -32000, message: "full"))).encoded(),
             "unattached: the host refused this extension: full"),
            (RPCMessage.response(id: Self.answerID, result: .success(["hostPid": "forty-two"])).encoded(),
             "unattached: the host's answer to the hello named no pid"),
        ]
        for (reply, expected) in cases {
            let stage = try Stage()
            defer { stage.hostLock.release() }
            let host = try StandInHost(path: stage.group.socketPath, reply: reply)
            let said = switch stage.attach() {
            case .attached(let descriptor, _, _): "attached \(close(descriptor))"
            case .incompatible(let reason): "incompatible: " + reason
            case .unattached(let reason): "unattached: " + reason
            }
            #expect(said.hasPrefix(expected), "\(said)")
            withExtendedLifetime(host) {}
        }
    }

    /// No host (no lock held, no socket): unattached at once, nothing waited for.
    @Test func noHostIsUnattachedAtOnce() throws {
        let scratch = try TemporaryDirectory("tether-early")
        try #require(mkdir(scratch.group, 0o700) == 0)
        let group = try GroupDirectory(path: scratch.group)
        let started = MonotonicClock.seconds()
        let outcome = EarlyAttachment.attach(socketPath: group.socketPath, hostLockPath: try group.preparedLockPath(for: .host),
                                             hello: [:])
        guard case .unattached(let reason) = outcome else {
            Issue.record("attached without a host")
            return
        }
        #expect(reason == "no host is running" && MonotonicClock.seconds() - started < 2)
    }
}
