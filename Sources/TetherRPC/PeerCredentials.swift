#if os(Linux)
import Glibc
#endif

/// Who is on the other end of a Unix socket, as the kernel saw it at
/// connect time (`SO_PEERCRED`): it cannot be forged by the peer.
package struct PeerCredentials: Sendable, Equatable {
    package let pid: Int32
    package let uid: UInt32
    package let gid: UInt32

    package init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// nil if the kernel cannot say (not a Unix socket, or not Linux).
    package static func of(socket fd: Int32) -> PeerCredentials? {
        #if os(Linux)
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } — declared only
        // under _GNU_SOURCE, so it is spelled out here.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return PeerCredentials(pid: credentials.0, uid: credentials.1, gid: credentials.2)
        #else
        return nil
        #endif
    }
}
