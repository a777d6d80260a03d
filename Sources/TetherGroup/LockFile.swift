import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a lock file safely: close-on-exec, never through a symlink or a
/// hard link, never blocking on a FIFO planted in its place, only a regular
/// file of ours.
enum LockFile {
    enum Access {
        /// Read-only; a missing file means "nobody ever held it".
        case probe
        /// Read-only, created if missing (watchers need an inode to watch).
        case watch
        /// Read-write, created if missing.
        case hold
    }

    /// The open descriptor and the file's identity, or nil when `access` is
    /// `.probe` and the file does not exist.
    static func open(_ path: String, _ access: Access) throws(GroupError) -> (fd: Int32, info: stat)? {
        let flags: Int32 = switch access {
        case .probe: O_RDONLY
        case .watch: O_RDONLY | O_CREAT
        case .hold: O_RDWR | O_CREAT
        }
        return try OwnedFile.opening(path, doing: "inspect lock file") { () throws(GroupError) -> Int32? in
            do throws(Errno) {
                return try Syscall.open(path, flags, mode: 0o600)
            } catch .tooManySymbolicLinkLevels {
                throw .symlinkRefused(path)
            } catch .noSuchFileOrDirectory where access == .probe {
                return nil
            } catch {
                throw .system("open lock file", path: path, error)
            }
        }
    }
}
