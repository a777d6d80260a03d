#if canImport(Glibc)
import Glibc
#endif
import TetherTestSupport

/// Tells when someone tries a lock file: nothing opens the refresh lock
/// but a taker (`ExclusiveLock`), so an open of it, seen through inotify,
/// means a broker or a session is waiting for the lock the test holds.
/// Set it up after the test took the lock (its own open is not counted).
final class LockAttemptWatch: Sendable {
    private let fd: Int32

    init(_ path: String) throws {
        let fd = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        guard fd >= 0 else { throw WatchError(what: "inotify_init1", code: errno) }
        guard inotify_add_watch(fd, path, UInt32(IN_OPEN)) >= 0 else {
            let code = errno
            close(fd)
            throw WatchError(what: "inotify_add_watch", code: code)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Waits until the file is opened, at most `seconds` (scaled as the
    /// suite's waits are); false if nobody tried it by then.
    func attempted(within seconds: Double = 10) async throws -> Bool {
        let fd = fd
        return try await offThePool {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(seconds * TestTimeout.scale * 1000))
            var buffer = [UInt8](repeating: 0, count: 4096)
            while ready > 0, read(fd, &buffer, buffer.count) > 0 {}
            return ready > 0
        }
    }

    struct WatchError: Error {
        let what: String
        let code: Int32
    }
}
