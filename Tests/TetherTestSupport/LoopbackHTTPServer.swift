import Foundation
import Synchronization
import TetherLoop

/// An HTTP server in the test's own process, on a loopback port the kernel
/// picks: a thread per connection, one request each, answered as `route`
/// says for the request's path. It misbehaves on request (`Answer`), so a
/// client's tests need no second process. `stop` (or deinit) ends every
/// connection, held ones included.
package final class LoopbackHTTPServer: Sendable {
    /// What a path is answered with.
    package enum Answer: Sendable {
        /// A status, headers and a body with its length; the connection closes.
        case reply(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
        /// These bytes exactly, then the connection closes.
        case raw([UInt8])
        /// `head`, then `chunk` `count` times, as fast as the peer reads.
        case stream(head: [UInt8], chunk: [UInt8], count: Int)
        /// `head`, then a space a second until the peer or `stop` ends it.
        case trickle(head: [UInt8])
        /// Nothing, with the connection held open until `stop`.
        case silence
    }

    package let port: Int
    private let listener: Int32
    private let state = Mutex(State())
    /// Broadcast as each request is read.
    private let arrived = NSCondition()

    private struct State {
        var counts: [String: Int] = [:]
        var peers: Set<Int32> = []
        var stopped = false
    }

    package init(route: @escaping @Sendable (_ method: String, _ path: String) -> Answer) throws {
        let socket = try LoopbackSocket(listening: true, backlog: 512)
        listener = dup(socket.fd)
        port = socket.port
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        let listener = self.listener
        try DetachedThread.start { [weak self] in
            // The accepting thread owns the listener: `stop` shuts it, and
            // it is closed here once accept fails, never while in use.
            defer { close(listener) }
            while true {
                // Glibc's module lacks accept4: close-on-exec at once, before
                // the test process spawns anything it could leak into.
                let peer = accept(listener, nil, nil)
                if peer >= 0 { _ = fcntl(peer, F_SETFD, FD_CLOEXEC) }
                guard peer >= 0, let server = self else {
                    if peer >= 0 { close(peer) }
                    if peer < 0, errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                server.serve(peer, route)
            }
        }
    }

    deinit { stop() }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Requests read so far, by path.
    package var counts: [String: Int] { state.withLock { $0.counts } }

    /// Waits until a request for `path` has been read; false after `timeout` seconds.
    package func waitForRequest(_ path: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        arrived.lock()
        defer { arrived.unlock() }
        while counts[path, default: 0] == 0 {
            guard arrived.wait(until: deadline) else { return counts[path, default: 0] > 0 }
        }
        return true
    }

    /// Closes the listener and ends every connection still open.
    package func stop() {
        // Under the lock: a connection's thread closes its socket under it
        // too, so no number shut here is already another's.
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for peer in state.peers { shutdown(peer, Int32(SHUT_RDWR)) }
        }
    }

    private func serve(_ peer: Int32, _ route: @escaping @Sendable (String, String) -> Answer) {
        let admitted = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.peers.insert(peer)
            return true
        }
        guard admitted else { close(peer); return }
        do {
            try DetachedThread.start { [self] in
                defer {
                    state.withLock { state in
                        state.peers.remove(peer)
                        close(peer)
                    }
                }
                guard let (method, path) = Self.readRequest(peer) else { return }
                arrived.lock()
                state.withLock { $0.counts[path, default: 0] += 1 }
                arrived.broadcast()
                arrived.unlock()
                respond(peer, route(method, path))
            }
        } catch {
            state.withLock { state in
                state.peers.remove(peer)
                close(peer)
            }
        }
    }

    private func respond(_ peer: Int32, _ answer: Answer) {
        switch answer {
        case .reply(let status, let headers, let body):
            let lines = ["HTTP/1.1 \(status) \(status < 400 ? "OK" : "Error")", "Content-Length: \(body.count)", "Connection: close"]
                + headers.map { "\($0.0): \($0.1)" }
            _ = Self.send(peer, Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body)
        case .raw(let bytes):
            _ = Self.send(peer, bytes)
        case .stream(let head, let chunk, let count):
            guard Self.send(peer, head) else { return }
            for _ in 0..<count where Self.send(peer, chunk) {}
        case .trickle(let head):
            guard Self.send(peer, head) else { return }
            var pending = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            // Until the peer closes or `stop` shuts the socket: either makes it readable.
            while poll(&pending, 1, 1000) == 0, Self.send(peer, [0x20]) {}
        case .silence:
            var byte: UInt8 = 0
            while recv(peer, &byte, 1, 0) > 0 {}
        }
    }

    /// The request's method and path (query dropped), once its head and any
    /// body it announces are read; nil if the peer sent no whole request.
    private static func readRequest(_ peer: Int32) -> (String, String)? {
        var head: [UInt8] = [], byte: UInt8 = 0
        while head.count < 65_536, recv(peer, &byte, 1, 0) == 1 {
            head.append(byte)
            if head.suffix(4) == [0x0d, 0x0a, 0x0d, 0x0a] { break }
        }
        let text = String(decoding: head, as: UTF8.self)
        let words = text.prefix { $0 != "\r" }.split(separator: " ")
        guard head.suffix(4) == [0x0d, 0x0a, 0x0d, 0x0a], words.count >= 2 else { return nil }
        let length = text.split(separator: "\r\n").lazy
            .compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
        var remaining = min(max(length, 0), 1 << 20)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while remaining > 0 {
            let read = recv(peer, &buffer, min(remaining, buffer.count), 0)
            guard read > 0 else { return nil }
            remaining -= read
        }
        return (String(words[0]), String(words[1].prefix { $0 != "?" }))
    }

    private static func send(_ peer: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}

extension LoopbackHTTPServer.Answer {
    /// 200 with a JSON body.
    package static func json(_ body: String, status: Int = 200) -> Self {
        .reply(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    /// A status line and headers, as `stream` and `trickle` begin.
    package static func head(_ status: String, _ headers: [(String, String)]) -> [UInt8] {
        Array((["HTTP/1.1 \(status)"] + headers.map { "\($0.0): \($0.1)" } + ["", ""]).joined(separator: "\r\n").utf8)
    }
}
