import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Asks "is the holder of this lock alive?" without ever disturbing it.
///
/// A Tether holder takes two locks on one descriptor: an OFD lock first, then
/// a flock(2) lock. The probe *queries* the OFD lock
/// (F_OFD_GETLK takes nothing; only an exclusive lock is a holder, a
/// foreign read lock is not). Only if no OFD lock is held does it look for
/// holders that only use flock (util-linux flock(1), Darwin's O_EXLOCK on a
/// shared volume, older tools): a shared flock, taken and given back at
/// once, is refused only while such a holder has its exclusive one. A
/// Tether holder's flock is shared, so a storm of probes can never make its
/// acquisition fail. A confined role that may take no lock reads the
/// kernel's table (`/proc/locks`) instead.
///
/// `LockProbe(path:)` keeps its descriptor open: while the lock is held a
/// probe is then one syscall; it creates the lock file, but not its
/// directory. `LockProbe.status(ofLockAt:)` opens and closes, and reads a
/// lock that does not exist (a feature never held) as not running.
public final class LockProbe: @unchecked Sendable {
    package let path: String
    private let fd: Int32
    private let file: stat

    /// Opens (creating if needed) the lock file at `path` for repeated probes.
    public init(path: String) throws(GroupError) {
        self.path = path
        guard let opened = try LockFile.open(path, .watch) else {
            throw .system("open lock file", path: path, .noSuchFileOrDirectory)
        }
        self.fd = opened.fd
        self.file = opened.info
    }

    deinit { Syscall.close(fd) }

    /// Whether the lock is held now; with `identifyHolder`, who holds it
    /// (its record, or the kernel's lock table for a foreign holder).
    public func status(identifyHolder: Bool = false) throws(GroupError) -> LockStatus {
        try Self.status(fd: fd, file: file, path: path, identifyHolder: identifyHolder, keepsDescriptor: true)
    }

    /// Probes the lock at `path`. A lock file that does not exist was never
    /// held, so it reads as not running (and is not created).
    public static func status(ofLockAt path: String, identifyHolder: Bool = true) throws(GroupError) -> LockStatus {
        guard let opened = try LockFile.open(path, .probe) else { return .notRunning }
        defer { Syscall.close(opened.fd) }
        return try status(fd: opened.fd, file: opened.info, path: path,
                          identifyHolder: identifyHolder, keepsDescriptor: false)
    }

    /// Whether process `pid` itself holds the lock at `path`, by the
    /// kernel's word, not the file's: the lock is held and `pid` took the
    /// flock(2) half of it (a Tether holder's is shared, so the kernel's
    /// table names it). A descendant that inherited the descriptor is not
    /// named. False where the kernel's table cannot be read.
    package static func isHeld(byProcess pid: Int32, lockAt path: String) -> Bool {
        #if os(Linux)
        guard let status = try? status(ofLockAt: path, identifyHolder: false), status.running,
              let opened = try? LockFile.open(path, .probe) else { return false }
        defer { Syscall.close(opened.fd) }
        return FlockTable.holders(device: opened.info.st_dev, inode: opened.info.st_ino).contains(pid)
        #else
        return false
        #endif
    }

    enum State {
        case free
        case heldByTether
        case heldByFlock
    }

    static func state(of fd: Int32, file: stat, keepsDescriptor: Bool) throws(Errno) -> State {
        #if os(Linux)
        // A foreign read lock is no holder: ignored.
        if try OFDLock.conflict(fd)?.exclusive == true { return .heldByTether }
        #endif
        // The cheap check for an exclusive flock (flock(1), O_EXLOCK): a
        // shared flock is refused only while one is held. A Tether holder's
        // flock is shared too, so its acquisition never fails for this
        // (invariant 3); the lock is given back at once.
        do {
            guard try Syscall.flock(fd, LOCK_SH | LOCK_NB) else { return .heldByFlock }
        } catch {
            // A role that may take no lock (its filter says EPERM) reads
            // the kernel's table instead, taking nothing: the one cost that
            // grows with the machine's locks, paid only where nothing else
            // can decide.
            #if os(Linux)
            if let holder = FlockTable.lookUp(device: file.st_dev, inode: file.st_ino) {
                return holder == nil ? .free : .heldByFlock
            }
            #endif
            throw error
        }
        // A descriptor about to be closed drops the lock anyway; a kept one
        // must give it back now.
        if keepsDescriptor { _ = try? Syscall.flock(fd, LOCK_UN) }
        return .free
    }

    static func status(
        fd: Int32, file: stat, path: String, identifyHolder: Bool, keepsDescriptor: Bool
    ) throws(GroupError) -> LockStatus {
        let state: State
        do {
            state = try Self.state(of: fd, file: file, keepsDescriptor: keepsDescriptor)
        } catch {
            throw .system("probe lock file", path: path, error)
        }
        switch state {
        case .free:
            return .notRunning
        case .heldByTether:
            guard identifyHolder else { return LockStatus(running: true) }
            return LockStatus(running: true, holder: readHolder(fd))
        case .heldByFlock:
            guard identifyHolder else { return LockStatus(running: true) }
            #if os(Linux)
            let pid = FlockTable.exclusiveHolder(device: file.st_dev, inode: file.st_ino)
            return LockStatus(running: true, holder: pid.map { HolderInfo(pid: $0, since: nil, label: nil) })
            #else
            return LockStatus(running: true)
            #endif
        }
    }

    /// The holder's own record, if it is complete and its process exists (a
    /// new holder may not have written it yet; a crashed one leaves it stale).
    static func readHolder(_ fd: Int32) -> HolderInfo? {
        guard let bytes = try? Syscall.pread(fd, maximum: 512, at: 0),
              let info = HolderInfo(parsing: bytes),
              Syscall.processExists(info.pid) else { return nil }
        return info
    }
}
