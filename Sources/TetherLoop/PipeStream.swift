import CLibUV
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A byte stream over a pipe or a Unix-domain socket (`uv_pipe_t`): a child
/// process's stdio, or one end of a connection to a socket in the group.
package final class PipeStream: LoopHandle, @unchecked Sendable {
    package enum ReadEvent {
        case data([UInt8])
        case end
        case failed(Errno)
    }

    /// sun_path holds 108 bytes on Linux including the NUL; libuv before 1.46
    /// silently truncates longer paths, so they are refused here instead.
    package static let maximumSocketPathLength = 107

    private var onRead: ((ReadEvent) -> Void)?
    /// True between `startReading` and `stopReading` / close.
    package private(set) var isReading = false

    package override init(loop: EventLoop) {
        super.init(loop: loop)
        // uv_pipe_init only links the handle into the loop; it cannot fail.
        uv_pipe_init(loop.uv, raw(uv_pipe_t.self), 0)
        adopt()
    }


    var stream: UnsafeMutablePointer<uv_stream_t> { raw(uv_stream_t.self) }

    /// Wraps an existing fd (which the stream then owns and closes).
    package func open(fileDescriptor: Int32) throws(Errno) {
        loop.assertInLoop()
        try uvCheck(uv_pipe_open(raw(uv_pipe_t.self), fileDescriptor))
    }

    /// A stream on `fileDescriptor`, which it owns from here on: closed
    /// with the stream, or at once if the stream cannot take it.
    package static func adopting(loop: EventLoop, fileDescriptor: Int32) throws(Errno) -> PipeStream {
        let stream = PipeStream(loop: loop)
        do throws(Errno) {
            try stream.open(fileDescriptor: fileDescriptor)
        } catch {
            stream.close()
            _ = Glibc.close(fileDescriptor)
            throw error
        }
        return stream
    }

    /// The fd under the stream, once open or connected.
    package var fileDescriptor: Int32? {
        guard !isClosed else { return nil }
        var fd = uv_os_fd_t()
        return uv_fileno(handle, &fd) == 0 ? fd : nil
    }

    /// Connects to the Unix socket at `path`.
    package static func connect(
        loop: EventLoop,
        path: String,
        _ completion: @escaping (Result<PipeStream, Errno>) -> Void
    ) {
        loop.assertInLoop()
        guard path.utf8.count <= maximumSocketPathLength else {
            completion(.failure(.fileNameTooLong))
            return
        }
        let pipe = PipeStream(loop: loop)
        let request = ConnectRequest(pipe: pipe, completion: completion)
        let req = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passRetained(request).toOpaque()
        uv_pipe_connect(req, pipe.raw(uv_pipe_t.self), path) { req, status in
            guard let req, let data = req.pointee.data else { return }
            let request = Unmanaged<ConnectRequest>.fromOpaque(data).takeRetainedValue()
            req.deallocate()
            if status < 0 {
                request.pipe.close()
                request.completion(.failure(uvErrno(status)))
            } else {
                request.completion(.success(request.pipe))
            }
        }
    }

    private final class ConnectRequest {
        let pipe: PipeStream
        let completion: (Result<PipeStream, Errno>) -> Void
        init(pipe: PipeStream, completion: @escaping (Result<PipeStream, Errno>) -> Void) {
            self.pipe = pipe
            self.completion = completion
        }
    }

    /// After the peer's end of stream: whether it ended only its sending
    /// side (`shutdown(SHUT_WR)`) and may still read, rather than closing
    /// altogether (which the kernel marks as a hang-up). False for a
    /// pipe's read end (nothing goes back), and once closed.
    package var peerStillReads: Bool {
        guard let fd = fileDescriptor else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&entry, 1, 0) >= 0 else { return false }
        return entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) == 0
    }

    /// Bytes queued for writing and not yet accepted by the kernel: a peer
    /// that does not read makes this grow.
    package var writeQueueSize: Int {
        isClosed ? 0 : uv_stream_get_write_queue_size(stream)
    }

    /// Delivers bytes as they arrive, then `.end` once the peer closes.
    package func startReading(_ onRead: @escaping (ReadEvent) -> Void) throws(Errno) {
        loop.assertInLoop()
        precondition(!isClosed, "stream is closed")
        self.onRead = onRead
        isReading = true
        try uvCheck(uv_read_start(stream, { handle, _, buf in
            // One read at a time on the loop, copied out before the next:
            // the loop's one buffer serves every stream.
            guard let buf, let me = LoopHandle.object(UnsafeMutableRawPointer(handle)) as? PipeStream else { return }
            let buffer = me.loop.readBuffer
            buf.pointee = uv_buf_init(buffer.baseAddress?.assumingMemoryBound(to: CChar.self),
                                      UInt32(buffer.count))
        }, { handle, nread, buf in
            guard let me = LoopHandle.object(UnsafeMutableRawPointer(handle)) as? PipeStream else { return }
            if nread > 0, let base = buf?.pointee.base {
                let bytes = Array(UnsafeRawBufferPointer(start: base, count: nread))
                me.onRead?(.data(bytes))
            } else if nread == uvEOF {
                me.onRead?(.end)
            } else if nread < 0 {
                me.onRead?(.failed(uvErrno(Int32(truncatingIfNeeded: nread))))
            }
        }))
    }

    /// Starts reading again after `stopReading`, with the same callback.
    package func resumeReading() throws(Errno) {
        loop.assertInLoop()
        guard let onRead, !isClosed, !isReading else { return }
        try startReading(onRead)
    }

    package func stopReading() {
        loop.assertInLoop()
        guard !isClosed else { return }
        isReading = false
        uv_read_stop(stream)
    }

    /// Told after each write leaves the queue (nil, or why it failed): the
    /// queue shrank. One hook per stream, so a caller that watches its
    /// queue pays no closure per write.
    package var onWritten: ((Errno?) -> Void)?

    /// Queues `bytes` for writing; `completion` reports the outcome.
    package func write(_ bytes: [UInt8], _ completion: ((Errno?) -> Void)? = nil) {
        loop.assertInLoop()
        guard !isClosed else { completion?(.badFileDescriptor); return }
        let request = WriteRequest(bytes: bytes, completion: completion)
        let req = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        let token = Unmanaged.passRetained(request)
        req.pointee.data = token.toOpaque()
        var buf = uv_buf_init(request.storage.baseAddress?.assumingMemoryBound(to: CChar.self),
                              UInt32(request.storage.count))
        let rc = uv_write(req, stream, &buf, 1) { req, status in
            guard let req, let data = req.pointee.data else { return }
            let request = Unmanaged<WriteRequest>.fromOpaque(data).takeRetainedValue()
            let handle = req.pointee.handle
            req.deallocate()
            let error = status < 0 ? uvErrno(status) : nil
            request.completion?(error)
            if let handle, let me = LoopHandle.object(UnsafeMutableRawPointer(handle)) as? PipeStream {
                me.onWritten?(error)
            }
        }
        if rc < 0 {
            token.release()
            req.deallocate()
            completion?(uvErrno(rc))
        }
    }

    /// Buffers must stay put until libuv's write callback, so each write
    /// owns a copy.
    private final class WriteRequest {
        let storage: UnsafeMutableRawBufferPointer
        let completion: ((Errno?) -> Void)?
        init(bytes: [UInt8], completion: ((Errno?) -> Void)?) {
            storage = .allocate(byteCount: max(bytes.count, 1), alignment: 1)
            storage.copyBytes(from: bytes)
            self.completion = completion
        }
        deinit { storage.deallocate() }
    }

    override func willClose() {
        onRead = nil
        onWritten = nil
        isReading = false
    }
}
