import SystemPackage
import TetherGroup
#if canImport(Glibc)
import Glibc
#endif

/// What worlds show at `/etc`: a directory of the host's own holding a copy
/// of each configuration file a world shows (`ExtensionWorld.configuration`)
/// and an empty directory where each configuration directory is bound,
/// itself bound once. Sixteen files bound one by one were a third of what
/// entering a world cost (each a detached tree, a mount, its attributes and
/// a Landlock rule); a copy costs the host a stat of its source now and then.
///
/// A copy is replaced whole (renamed over) when its source's size or
/// modification time is not the copy's, so worlds already running see the
/// new one too: a bound file kept the inode it was bound to, and a resolver
/// configuration replaced by rename never reached them.
package struct WorldConfiguration: Sendable {
    /// The directory bound at `/etc`: `PARENT/world-etc`, 0700 (its
    /// extensions read it as the host's user), where no extension can write.
    package let directory: String
    /// Absolute paths directly under `/etc`, each shown by its last component.
    let sources: [String]

    /// Larger sources are not shown: a world's /etc is the host's to copy.
    static let maximumSize = AtomicFile.maximumSize

    /// `parent`: a directory of the host's own (`PrivateTemporaryDirectory.hostParent`).
    package init(parent: String, sources: [String] = ExtensionWorld.configuration) throws(Errno) {
        directory = try PrivateTemporaryDirectory.ownedDirectory(parent + "/world-etc")
        self.sources = sources
    }

    /// Brings every copy up to date with its source, and makes a mount
    /// point for each source that is a directory (the directory itself
    /// again, if a cleaner of /tmp removed it). True when a mount point came
    /// or went: worlds made before bind what is no longer there. The first
    /// error, after the rest were tried; what could not be read is not shown.
    @discardableResult
    package func refresh() throws(Errno) -> Bool {
        _ = try PrivateTemporaryDirectory.ownedDirectory(directory)
        var failure: Errno?
        var changed = false
        for source in sources {
            do throws(Errno) {
                changed = try refresh(source) || changed
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return changed
    }

    /// The configuration directories a world binds beneath it (sources
    /// resolved, targets in the world), each with its mount point here.
    package func directoryBinds() -> [(source: String, target: String)] {
        sources.compactMap { path in
            guard let resolved = ExtensionWorld.resolved(path), Self.kind(of: resolved) == S_IFDIR,
                  Self.kind(of: copy(of: path), following: false) == S_IFDIR else { return nil }
            return (resolved, path)
        }
    }

    /// Removes the directory and its copies (at the host's clean stop).
    package func remove() {
        for source in sources {
            let copy = copy(of: source)
            if unlink(copy) != 0 { rmdir(copy) }
            AtomicFile.removeTemporaryFiles(of: copy)
        }
        rmdir(directory)
    }

    private func copy(of source: String) -> String {
        directory + "/" + (source.split(separator: "/").last.map(String.init) ?? "")
    }

    /// One source; true when its mount point came or went.
    private func refresh(_ path: String) throws(Errno) -> Bool {
        let copy = copy(of: path)
        var current = stat()
        let present = lstat(copy, &current) == 0
        let wasDirectory = present && current.st_mode & S_IFMT == S_IFDIR
        // Gone from the machine (or no longer ours to read): gone from the worlds too.
        func drop() -> Bool {
            if present, !wasDirectory { unlink(copy) }
            return present && wasDirectory && rmdir(copy) == 0
        }
        var source = stat()
        guard let resolved = ExtensionWorld.resolved(path), stat(resolved, &source) == 0 else { return drop() }
        switch source.st_mode & S_IFMT {
        case S_IFDIR:
            if wasDirectory { return false }
            if present { unlink(copy) }
            if mkdir(copy, 0o755) != 0, errno != EEXIST { throw Errno(rawValue: errno) }
            return true
        case S_IFREG where Int64(source.st_size) <= Int64(Self.maximumSize):
            let mode = source.st_mode & 0o644
            if present, current.st_mode & S_IFMT == S_IFREG, current.st_mode & 0o777 == mode, current.st_size == source.st_size,
               current.st_mtim.tv_sec == source.st_mtim.tv_sec, current.st_mtim.tv_nsec == source.st_mtim.tv_nsec {
                return false
            }
            let changed = wasDirectory && rmdir(copy) == 0
            do throws(GroupError) {
                guard let bytes = try AtomicFile.read(resolved) else { return drop() || changed }
                // Never more open than its source; not synced: a crash
                // loses a copy of what the machine keeps (the host's
                // loop waits for this, and an fsync can take long).
                try AtomicFile.write(bytes, to: copy, mode: mode, sweeping: .all, durable: false)
            } catch {
                _ = drop()
                if case .system(_, _, let errno) = error { throw errno }
                throw .ioError
            }
            // Its source's time: what tells, next time, whether it changed.
            var times = [source.st_atim, source.st_mtim]
            if utimensat(AT_FDCWD, copy, &times, AT_SYMLINK_NOFOLLOW) != 0 { throw Errno(rawValue: errno) }
            return changed
        default:
            // Neither a directory nor a file a world may show.
            return drop()
        }
    }

    private static func kind(of path: String, following: Bool = true) -> mode_t? {
        var info = stat()
        guard (following ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }
}
