#if canImport(Glibc)
import Glibc
#endif
import TetherLoop

/// Reaps the host's children that no `ChildProcess` waits for. The host is
/// a child subreaper (`GroupReaper`): a background child that outlives its
/// extension's process comes to the host, and without a world of its own
/// (a PID namespace, whose first process inherits it instead) it would
/// stay a zombie until its extension ends, each holding a pid of its
/// cgroup's `pids.max`, or of the user's process limit.
final class OrphanReaper {
    private var watcher: SignalWatcher?

    init(loop: EventLoop) {
        watcher = try? SignalWatcher(loop: loop, signal: SIGCHLD) { _ in Self.reap() }
    }

    /// At the stop: each launch's leftovers are reaped with its group.
    func close() {
        watcher?.close()
        watcher = nil
    }

    /// Every child of this process that has ended and is no `ChildProcess`'s.
    static func reap(among pids: [Int32] = children()) {
        for pid in pids where !OwnedChildren.contains(pid) {
            var info = siginfo_t()
            _ = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG)
        }
    }

    /// This process's children: each thread's, from procfs.
    static func children() -> [Int32] {
        guard let tasks = opendir("/proc/self/task") else { return [] }
        defer { closedir(tasks) }
        var pids: [Int32] = []
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let tid = Int32(name) else { continue }
            pids += contents("/proc/self/task/\(tid)/children").split { $0 == 0x20 || $0 == 0x0a }
                .compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
        }
        return pids
    }

    /// A procfs file's bytes (at most 1 MiB: a pid list of 100,000 children).
    private static func contents(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }
}
