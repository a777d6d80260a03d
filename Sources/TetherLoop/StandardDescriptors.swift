#if canImport(Glibc)
import Glibc
#endif

/// Descriptors 0, 1 and 2 open, on /dev/null where they were closed
/// (`tether host <&-`, a tool started with no stdin): otherwise the next
/// pipe or socket would take one of those numbers, a child would get it as
/// its standard input or output, and libuv, which never closes 0-2, aborts
/// when the handle closes (`uv__close: Assertion fd > STDERR_FILENO`).
package enum StandardDescriptors {
    package static func ensureOpen() {
        for fd in Int32(0)...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            // open takes the lowest free number: this one. Not O_CLOEXEC:
            // 0-2 are what children inherit as their standard streams.
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened != fd, opened >= 0 { close(opened) }
        }
    }
}
