import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and atomic replacement: write a temporary file next to
/// the target, fsync it, rename it over the target, fsync the directory.
/// A reader, or a crash at any instant, sees the old content or the new one,
/// never a torn mix. `Syscall.open` adds O_CLOEXEC and O_NOFOLLOW to every
/// open here, so no descriptor leaks into a child and no symlink is followed.
package enum AtomicFile {
    /// Files larger than this are refused when read: shared files are small.
    package static let maximumSize = 16 << 20

    /// The file's bytes, or nil when it does not exist.
    package static func read(_ path: String) throws(GroupError) -> [UInt8]? {
        // A FIFO planted here (an extension may make one in shared/) is not
        // waited on: it is refused below, not a regular file.
        guard let fd = try OwnedFile.openForReading(path, doing: "read") else { return nil }
        defer { Syscall.close(fd) }
        return try read(fd: fd, path: path)
    }

    /// The bytes of the regular file open at `fd`, at most `maximumSize`.
    package static func read(fd: Int32, path: String) throws(GroupError) -> [UInt8] {
        do {
            let info = try Syscall.fstat(fd)
            guard info.isRegularFile else { throw GroupError.notARegularFile(path) }
            guard Int(info.st_size) <= maximumSize else { throw GroupError.system("read", path: path, .fileTooLarge) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(info.st_size))
            while true {
                let chunk = try Syscall.pread(fd, maximum: 64 << 10, at: off_t(bytes.count))
                if chunk.isEmpty { return bytes }
                bytes += chunk
                guard bytes.count <= maximumSize else { throw GroupError.system("read", path: path, .fileTooLarge) }
            }
        } catch let error as GroupError {
            throw error
        } catch {
            throw .system("read", path: path, error as? Errno ?? .ioError)
        }
    }

    /// Which temp files of a crashed writer a write removes first.
    package enum Sweep: Sendable {
        /// None: the caller swept already.
        case none
        /// Those no writer holds (each holds a lock on its own from
        /// creation to rename): safe without the store's lock.
        case deadWriters
        /// Every one: only for callers that write `path` under a lock they
        /// hold, so that any temp file found is a dead writer's.
        case all
    }

    /// Removes the temp files `write` leaves for `path` when its writer dies
    /// (`.NAME.PID.N.tmp` beside it): they may hold a full copy of a secret.
    package static func removeTemporaryFiles(of path: String, _ sweep: Sweep = .all) {
        guard sweep != .none else { return }
        let (directory, name) = split(path)
        guard let stream = opendir(directory) else { return }
        defer { closedir(stream) }
        var leftovers: [String] = []
        while let entry = readdir(stream) {
            let entryName = DirectoryEntry.name(entry)
            guard writerPID(ofTemporary: entryName, for: name) != nil else { continue }
            if sweep == .deadWriters, !isAbandoned("\(directory)/\(entryName)") { continue }
            leftovers.append(entryName)
        }
        for leftover in leftovers { unlink("\(directory)/\(leftover)") }
    }

    /// A temp file no one holds is a dead writer's once this old: the
    /// instant between its creation and its writer's lock is covered.
    static let unheldAfterSeconds = 10
    /// Where its lock cannot be asked (a filesystem without locks): by age.
    static let abandonedAfterSeconds = 60

    /// Whether the writer of the temp file at `path` is gone. Not by its pid:
    /// a writer in another PID namespace (an extension's world) names its
    /// file with a pid that means nothing here, and one stopped (SIGSTOP) or
    /// slow past any age still lives. Its OFD lock is asked, not taken.
    private static func isAbandoned(_ path: String) -> Bool {
        guard let fd = try? Syscall.open(path, O_RDONLY) else { return false }
        defer { Syscall.close(fd) }
        guard let info = try? Syscall.fstat(fd) else { return false }
        let age = Int(time(nil)) - Int(info.st_mtim.tv_sec)
        do throws(Errno) {
            return try OFDLock.conflict(fd) == nil && age >= unheldAfterSeconds
        } catch {
            return age >= abandonedAfterSeconds
        }
    }

    /// The writer's pid if `entry` is exactly `.NAME.PID.N.tmp`.
    static func writerPID(ofTemporary entry: String, for name: String) -> Int32? {
        let prefix = ".\(name)."
        guard entry.hasPrefix(prefix), entry.hasSuffix(".tmp") else { return nil }
        let middle = entry.dropFirst(prefix.count).dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
        guard middle.count == 2, middle.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let pid = Int32(middle[0]), Int(middle[1]) != nil else { return nil }
        return pid
    }

    private static func split(_ path: String) -> (directory: String, name: String) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return (directory.isEmpty ? "/" : directory, name)
    }

    /// Replaces the file at `path` with `bytes`, atomically and (unless not
    /// `durable`: a copy of what is kept elsewhere) durably, first removing
    /// crashed writers' temp files as `sweeping` says.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600,
                              sweeping: Sweep = .deadWriters, durable: Bool = true) throws(GroupError) {
        removeTemporaryFiles(of: path, sweeping)
        let (directory, name) = split(path)
        var temporary = ""
        var fd: Int32 = -1
        do throws(Errno) {
            for attempt in 0..<16 {
                temporary = "\(directory)/.\(name).\(getpid()).\(attempt).tmp"
                do {
                    fd = try Syscall.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
                    break
                } catch .fileExists {
                    continue  // a crashed writer's leftover; try the next name
                }
            }
            guard fd >= 0 else { throw Errno.fileExists }
            // Held until the rename: a sweep sees a live writer's file as live
            // (best effort: a filesystem without locks is swept by age).
            _ = try? OFDLock.tryLockExclusive(fd)
            try Syscall.pwrite(fd, bytes, at: 0)
            if durable { _ = try Syscall.check { fsync(fd) } }
            _ = try Syscall.check { rename(temporary, path) }
            Syscall.close(fd)
            fd = -1
        } catch {
            if fd >= 0 { Syscall.close(fd) }
            if !temporary.isEmpty { unlink(temporary) }
            throw .system("write", path: path, error)
        }
        // The rename is durable once the directory is synced.
        if durable, let dirfd = try? Syscall.open(directory, O_RDONLY | O_DIRECTORY) {
            fsync(dirfd)
            Syscall.close(dirfd)
        }
    }
}
