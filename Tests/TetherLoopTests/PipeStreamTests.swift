import Glibc
import SystemPackage
import Testing
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct PipeStreamTests {
    @Test func unixSocketPingPongAndEndOfStream() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/s.sock"
        let (reply, sawEnd): (String, Bool) = try await onLoop { loop, finish in
            let listener = UnixListener(loop: loop)
            try listener.bind(path: path)
            try listener.listen { result in
                guard case .success(let server) = result else { return }
                try? server.startReading { event in
                    switch event {
                    case .data(let bytes): server.write(Array("pong:".utf8) + bytes)
                    case .end, .failed: server.close()
                    }
                }
            }
            PipeStream.connect(loop: loop, path: path) { result in
                guard case .success(let client) = result else { return }
                var reply: [UInt8] = []
                try? client.startReading { event in
                    switch event {
                    case .data(let bytes):
                        reply += bytes
                        // The server closes once we do: that end proves EOF delivery.
                        if reply.count == 9 { shutdownWrite(client) }
                    case .end: finish((String(decoding: reply, as: UTF8.self), true))
                    case .failed: finish((String(decoding: reply, as: UTF8.self), false))
                    }
                }
                client.write(Array("ping".utf8))
            }
        }
        #expect(reply == "pong:ping")
        #expect(sawEnd)
    }

    @Test func socketPathTooLongForSunPathIsRefused() async throws {
        let long = "/tmp/" + String(repeating: "x", count: 120)
        let error: Errno? = try await onLoop { (loop: EventLoop, finish: @escaping (Errno?) -> Void) in
            PipeStream.connect(loop: loop, path: long) { result in
                if case .failure(let error) = result { finish(error) } else { finish(nil) }
            }
        }
        #expect(error == .fileNameTooLong)
    }
}

/// Half-closes the client's write side with shutdown(2) so the server sees EOF.
private func shutdownWrite(_ stream: PipeStream) {
    if let fd = stream.fileDescriptor { shutdown(fd, Int32(SHUT_WR)) }
}
