import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// One extension launch's cgroup (in the host's `DelegatedCgroup`): the
/// spawn's child joins it before exec, so everything the extension starts
/// is in it, even what leaves its process group and session. The host
/// ends the whole tree with `cgroup.kill`, learns of a memory kill from
/// `memory.events`, and removes the cgroup once it is empty.
package final class ExtensionCgroup {
    package let directory: String
    /// Its path in the hierarchy (as /proc/PID/cgroup names it).
    package let path: String
    /// `memory.max` is set: the memory limit is enforced here, not by `RLIMIT_DATA`.
    package private(set) var memoryEnforced = false
    /// `cgroup.procs`, open for the spawn's child to write "0" (join it);
    /// -1 once closed.
    package private(set) var procs: Int32 = -1

    init(directory: String, path: String) {
        self.directory = directory
        self.path = path
    }

    deinit { closeProcs() }

    func openForJoining(memoryEnforced: Bool) throws(Errno) {
        let fd = open(directory + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        procs = fd
        self.memoryEnforced = memoryEnforced
    }

    /// After the spawn: the child has joined (or failed to).
    package func closeProcs() {
        if procs >= 0 { close(procs) }
        procs = -1
    }

    /// Any process still in it.
    package var isPopulated: Bool {
        guard let events = CgroupFile.read(directory + "/cgroup.events") else { return false }
        return CgroupFile.field("populated", in: events) == 1
    }

    /// Processes the kernel killed for the memory limit (`oom_kill`).
    package var memoryKills: Int {
        CgroupFile.read(directory + "/memory.events").flatMap { CgroupFile.field("oom_kill", in: $0) } ?? 0
    }

    /// `signal` to every process in it, one by one (a process forking
    /// meanwhile may miss it; SIGKILL goes through `kill()`).
    package func signalAll(_ signal: Int32) {
        for pid in CgroupFile.pids(directory + "/cgroup.procs") where pid > 0 {
            _ = Glibc.kill(pid, signal)
        }
    }

    /// SIGKILL to the whole tree at once (`cgroup.kill`, Linux 5.14+;
    /// before that, process by process).
    package func kill() {
        if (try? CgroupFile.write(directory + "/cgroup.kill", "1")) == nil {
            signalAll(SIGKILL)
        }
    }

    /// rmdir: succeeds only once it is empty. True when it is gone.
    /// Cgroups made inside it (where no Landlock kept the extension out of
    /// /sys) are removed first, bottom-up: `cgroup.kill` ended their
    /// processes too. The kernel keeps such a tree within `maxDepth`.
    package func remove() -> Bool {
        if rmdir(directory) == 0 || errno == ENOENT { return true }
        guard errno == EBUSY else { return false }
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        // Deeper than the limit: a tree made before it, or where the
        // extension could change it (no Landlock).
        Self.removeChildren(of: fd, depth: 16)
        close(fd)
        return rmdir(directory) == 0 || errno == ENOENT
    }

    /// `cgroup.max.depth` and `cgroup.max.descendants` below it.
    static let maxDepth = 4
    static let maxDescendants = 64

    /// The cgroups in the one open at `fd`, bottom-up, by their names'
    /// own bytes (the extension named them).
    private static func removeChildren(of fd: Int32, depth: Int) {
        guard depth > 0 else { return }
        for child in DirectoryEntries.read(fd) ?? [] where child.isDirectory {
            if unlinkat(fd, child.name.cString, AT_REMOVEDIR) == 0 || errno != EBUSY { continue }
            let inner = openat(fd, child.name.cString, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard inner >= 0 else { continue }
            removeChildren(of: inner, depth: depth - 1)
            close(inner)
            _ = unlinkat(fd, child.name.cString, AT_REMOVEDIR)
        }
    }
}
