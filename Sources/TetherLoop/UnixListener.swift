import CLibUV
import SystemPackage

/// A listening Unix-domain socket (`uv_pipe_t` in server mode).
package final class UnixListener: LoopHandle, @unchecked Sendable {
    private var onConnection: ((Result<PipeStream, Errno>) -> Void)?

    package override init(loop: EventLoop) {
        super.init(loop: loop)
        uv_pipe_init(loop.uv, raw(uv_pipe_t.self), 0)
        adopt()
    }

    /// Binds to `path`, which must not exist yet.
    package func bind(path: String) throws(Errno) {
        loop.assertInLoop()
        guard path.utf8.count <= PipeStream.maximumSocketPathLength else { throw .fileNameTooLong }
        try uvCheck(uv_pipe_bind(raw(uv_pipe_t.self), path))
    }

    /// Takes over `fd`, a bound Unix stream socket (one a service manager
    /// passed: socket activation); `listen` then serves it.
    package func adopt(fileDescriptor fd: Int32) throws(Errno) {
        loop.assertInLoop()
        try uvCheck(uv_pipe_open(raw(uv_pipe_t.self), fd))
    }

    /// The listening socket's fd.
    package var fileDescriptor: Int32? {
        guard !isClosed else { return nil }
        var fd = uv_os_fd_t()
        return uv_fileno(handle, &fd) == 0 ? fd : nil
    }

    /// Accepts connections; each arrives as a new `PipeStream`.
    package func listen(
        backlog: Int32 = 128,
        _ onConnection: @escaping (Result<PipeStream, Errno>) -> Void
    ) throws(Errno) {
        loop.assertInLoop()
        self.onConnection = onConnection
        try uvCheck(uv_listen(raw(uv_stream_t.self), backlog) { server, status in
            guard let me = LoopHandle.object(UnsafeMutableRawPointer(server)) as? UnixListener else { return }
            guard status >= 0 else {
                me.onConnection?(.failure(uvErrno(status)))
                return
            }
            let client = PipeStream(loop: me.loop)
            let rc = uv_accept(me.raw(uv_stream_t.self), client.stream)
            if rc < 0 {
                client.close()
                me.onConnection?(.failure(uvErrno(rc)))
            } else {
                me.onConnection?(.success(client))
            }
        })
    }

    override func willClose() { onConnection = nil }
}
