#if os(Linux)
import SystemPackage
import Glibc

/// Open-file-description locks (`F_OFD_*`, Linux 3.15+). They belong to the
/// open file description like flock(2) locks, but unlike flock they can be
/// *queried* with F_OFD_GETLK without being taken, which is what lets a probe
/// look without ever disturbing a holder.
enum OFDLock {
    // From <bits/fcntl-linux.h>; Swift's Glibc module is built without
    // _GNU_SOURCE, so these names are not imported.
    static let getLock: Int32 = 36  // F_OFD_GETLK
    static let setLock: Int32 = 37  // F_OFD_SETLK

    private static func wholeFile(_ type: Int32) -> flock {
        var description = flock()
        description.l_type = Int16(type)
        description.l_whence = Int16(SEEK_SET)
        description.l_start = 0
        description.l_len = 0  // to end of file, however large
        description.l_pid = 0  // must be 0 for OFD requests
        return description
    }

    /// Takes an exclusive lock on the whole file; false if another open file
    /// description holds one.
    static func tryLockExclusive(_ fd: Int32) throws(Errno) -> Bool {
        var description = wholeFile(F_WRLCK)
        do {
            _ = try Syscall.check { fcntl(fd, setLock, &description) }
            return true
        } catch where error == .resourceTemporarilyUnavailable || error == .permissionDenied {
            return false
        }
    }

    static func unlock(_ fd: Int32) {
        var description = wholeFile(F_UNLCK)
        _ = fcntl(fd, setLock, &description)
    }

    /// A lock another open file description (or process) holds that keeps
    /// us from the whole file: exclusive (a holder), or a read lock, which
    /// Tether never takes (someone else's: while it stands no holder can
    /// exist, whole-file write locks being exclusive of it). Its pid, -1 for
    /// an OFD lock. Nil when there is none. Takes nothing: no holder can
    /// ever fail because of this call.
    static func conflict(_ fd: Int32) throws(Errno) -> (exclusive: Bool, pid: Int32)? {
        var description = wholeFile(F_WRLCK)
        _ = try Syscall.check { fcntl(fd, getLock, &description) }
        guard description.l_type != Int16(F_UNLCK) else { return nil }
        return (description.l_type == Int16(F_WRLCK), description.l_pid)
    }
}
#endif
