import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The link a host hands an extension it launches: one end of a Unix
/// socket pair, descriptor 3 in the child, named by `TETHER_HOST_FD`, as
/// systemd passes sockets. Every process of that launch that speaks to the
/// host speaks through it, so the host knows who speaks from the link it
/// arrived on, not from what a hello claims; confined roles cannot make a
/// Unix socket of their own.
package enum LaunchLink {
    /// The descriptor the child finds it at.
    package static let descriptor: Int32 = 3
    /// The variable that tells the child it has one.
    package static let variable = "TETHER_HOST_FD"

    /// A connected stream pair, both ends close-on-exec (the spawn passes
    /// the child's on): the host's end and the child's.
    package static func pair() throws(Errno) -> (host: Int32, child: Int32) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw Errno(rawValue: errno)
        }
        return (ends[0], ends[1])
    }

    /// `fd` if it is a link `hostPID` made (the kernel names a socket
    /// pair's creator as the peer of both ends, `SO_PEERCRED`), made
    /// close-on-exec so this process's own children do not inherit it;
    /// nil for anything else (a stale variable, a descriptor that is not
    /// a socket or not the host's).
    package static func inherited(_ fd: Int32, from hostPID: Int32) -> Int32? {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK,
              let peer = PeerCredentials.of(socket: fd), peer.uid == geteuid(),
              // In a world of its own (and a wrapper's child there too) the
              // host is outside its PID namespace and has no pid in it (0).
              peer.pid == hostPID || peer.pid == 0,
              fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { return nil }
        return fd
    }
}
