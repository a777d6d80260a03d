#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says of a peer's process, read once: its process group,
/// session and cgroup. Matching it against every launch then costs no
/// system call per launch (a status poll with thousands running).
struct PeerProcess {
    let pid: Int32
    let group: pid_t
    let session: pid_t
    /// Its cgroup v2 path, as `/proc/PID/cgroup` names it; nil if unread.
    let cgroup: String?

    init(pid: Int32) {
        self.pid = pid
        group = getpgid(pid)
        session = getsid(pid)
        cgroup = Self.cgroup(of: pid)
    }

    private static func cgroup(of pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        let fd = open("/proc/\(pid)/cgroup", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard got > 0 else { return nil }
        return String(decoding: buffer[0..<got], as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }
}
