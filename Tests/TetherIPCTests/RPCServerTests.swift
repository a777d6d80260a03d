import Foundation
import Testing
import TetherIPC
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
    }

    init() throws {
        thread = try EventLoopThread()
        dir = try TemporaryDirectory("tether-ipc")
        path = dir.path + "/s.sock"
        let loop = thread.loop
        let (path, box) = (self.path, self.box)
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        loop.execute {
            do {
                box.server = try RPCServer(loop: loop, path: path) { _, method, params, respond in
                    switch method {
                    case "echo": respond(.success(params ?? .null))
                    case "uid": respond(.success(.number(Double(geteuid()))))
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
        get throws {
            let box = self.box
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var value = -1
            thread.loop.execute { value = box.server?.refusedPeers ?? -1; done.signal() }
            guard done.wait(timeout: .now() + 10) == .success else { throw TestTimeout(what: "the server loop") }
            return value
        }
    }

    deinit { thread.shutdown() }
}

/// A raw client socket, to send what a well-behaved client never would.
struct RawClient {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Reads one line, or nil at end of stream; bounded by poll(2).
    func readLine(timeout: Int32 = 10_000) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeout) == 1 else { return nil }
            guard read(fd, &byte, 1) == 1 else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == 0x0a { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// True once the server has closed its end (reads until EOF, bounded).
    func isClosedByPeer(timeout: Int32 = 10_000) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeout) == 1 else { return false }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return true }
        }
    }

    func close() { Glibc.close(fd) }
}

@Suite struct RPCServerTests {
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
}
