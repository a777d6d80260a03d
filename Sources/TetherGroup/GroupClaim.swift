#if canImport(Glibc)
import Glibc
#endif

/// A host's exclusive `flock` on the group directory itself, taken before
/// the host lock and held as long. A confined extension may write the
/// group, so it can rename `locks/host.lock` away (and a probe then finds a
/// new, free file), but it cannot rename or replace the group directory,
/// whose parent no role may write: a second host on the group is refused
/// by the kernel however the files inside were moved.
package final class GroupClaim {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { Syscall.close(fd) }

    /// What claiming a group found.
    package enum Outcome {
        case claimed(GroupClaim)
        /// Another host has it (its pid, where the lock table says).
        case claimedByHost(pid: Int32?)
        /// Only shared locks are in the way: no host's (a host's is
        /// exclusive), but a process that opened the directory, such as an
        /// extension's leftover child after its host was killed. The host
        /// starts without the claim rather than never again.
        case readLocked(by: [Int32])
    }

    /// Claims the group at `path`.
    package static func claim(_ path: String) throws(GroupError) -> Outcome {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDONLY | O_DIRECTORY)
        } catch {
            throw .system("open the group directory", path: path, error)
        }
        let info: stat
        do {
            info = try Syscall.fstat(fd)
            if try Syscall.flock(fd, LOCK_EX | LOCK_NB) { return .claimed(GroupClaim(fd: fd)) }
        } catch {
            Syscall.close(fd)
            throw .system("lock the group directory", path: path, error)
        }
        Syscall.close(fd)
        #if os(Linux)
        if case .some(nil) = FlockTable.lookUp(device: info.st_dev, inode: info.st_ino) {
            return .readLocked(by: FlockTable.holders(device: info.st_dev, inode: info.st_ino))
        }
        #endif
        return .claimedByHost(pid: holder(of: path))
    }

    /// The pid of the process that claims the group at `path`, if the
    /// kernel's lock table names one.
    package static func holder(of path: String) -> Int32? {
        guard let info = try? Syscall.lstat(path) else { return nil }
        return FlockTable.exclusiveHolder(device: info.st_dev, inode: info.st_ino)
    }
}

extension LockProbe {
    /// The status of `target`'s lock in `group`; for the host, also its
    /// claim on the group: a host whose lock file was renamed away (by an
    /// extension that may write the group) still runs, and says so.
    package static func status(of target: LockTarget, in group: GroupDirectory,
                               identifyHolder: Bool = true) throws(GroupError) -> (lock: String, status: LockStatus) {
        let path = try group.preparedLockPath(for: target)
        let status = try LockProbe.status(ofLockAt: path, identifyHolder: identifyHolder)
        // Only a group with a socket may have a host: the kernel's lock
        // table, whose cost grows with every lock on the machine, is read
        // for no probe of a group whose host is simply not running. (No
        // confined role may remove the socket: it is the group's top level.)
        guard !status.running, case .host = target, (try? Syscall.lstat(group.socketPath)) != nil,
              let pid = GroupClaim.holder(of: group.path) else {
            return (path, status)
        }
        return (path, LockStatus(running: true, holder: HolderInfo(pid: pid, since: nil, label: "host")))
    }
}
