import CLibUV
import SystemPackage

/// Readiness events on a file descriptor the caller owns (`uv_poll_t`):
/// inotify, pidfd, or any other pollable fd. The caller closes the fd, after
/// closing the watcher.
package final class PollWatcher: LoopHandle, @unchecked Sendable {
    package struct Events: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        package static let readable = Events(rawValue: Int32(UV_READABLE.rawValue))
        package static let writable = Events(rawValue: Int32(UV_WRITABLE.rawValue))
        package static let disconnect = Events(rawValue: Int32(UV_DISCONNECT.rawValue))
    }

    package let fileDescriptor: Int32
    private var callback: ((Result<Events, Errno>) -> Void)?

    package init(loop: EventLoop, fileDescriptor: Int32) throws(Errno) {
        self.fileDescriptor = fileDescriptor
        super.init(loop: loop)
        try uvCheck(uv_poll_init(loop.uv, raw(uv_poll_t.self), fileDescriptor))
        adopt()
    }

    package func start(_ events: Events, _ callback: @escaping (Result<Events, Errno>) -> Void) throws(Errno) {
        loop.assertInLoop()
        precondition(!isClosed, "poll watcher is closed")
        self.callback = callback
        try uvCheck(uv_poll_start(raw(uv_poll_t.self), events.rawValue) { handle, status, events in
            guard let me = LoopHandle.object(UnsafeMutableRawPointer(handle)) as? PollWatcher else { return }
            me.callback?(status < 0 ? .failure(uvErrno(status)) : .success(Events(rawValue: events)))
        })
    }

    package func stop() {
        loop.assertInLoop()
        guard !isClosed else { return }
        uv_poll_stop(raw(uv_poll_t.self))
    }

    override func willClose() { callback = nil }
}
