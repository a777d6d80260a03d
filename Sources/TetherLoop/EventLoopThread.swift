import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An `EventLoop` running on a thread of its own, for code (tests, servers)
/// that wants the loop in the background.
package final class EventLoopThread: Sendable {
    package let loop: EventLoop
    private let thread: pthread_t

    private final class Start {
        let loop: EventLoop
        init(_ loop: EventLoop) { self.loop = loop }
    }

    package init() throws(Errno) {
        let loop = try EventLoop()
        self.loop = loop
        var thread = pthread_t()
        let start = Unmanaged.passRetained(Start(loop)).toOpaque()
        let rc = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().loop.run()
            return nil
        }, start)
        if rc != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            throw Errno(rawValue: rc)
        }
        self.thread = thread
    }

    /// Stops the loop (closing its handles) and waits for the thread to end.
    /// Called on the loop's own thread (say, from a deinit that ran there),
    /// it cannot wait for itself: it stops the loop and lets the thread go.
    package func shutdown() {
        loop.stop()
        if loop.inEventLoop {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}
