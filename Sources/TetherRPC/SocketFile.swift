#if canImport(Glibc)
import Glibc
#endif

/// A socket file at a path: a host's, or a socket unit's that starts one
/// on the first connection (systemd's socket activation). Clients connect
/// to it even when no host holds the lock.
package enum SocketFile {
    package static func exists(at path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }
}
