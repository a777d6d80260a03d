#if canImport(Glibc)
import Glibc
#endif

/// The groups whose calls are allowed by their arguments: memory by its
/// flags, descriptors by fcntl command and ioctl request, sockets by family.
extension SeccompPolicy {
    // The same on x86_64 and aarch64.
    private static let mapShared: UInt64 = 0x01, mapPrivate: UInt64 = 0x02, mapSharedValidate: UInt64 = 0x03
    private static let mapAnonymous: UInt64 = 0x20, mapGrowsDown: UInt64 = 0x100
    private static let protGrowsDownOrUp: UInt64 = 0x0300_0000

    /// Memory. Never `MAP_GROWSDOWN` (a mapping the kernel counts as stack,
    /// not data, so `RLIMIT_DATA` does not bound it), nor SysV shared
    /// memory, semaphores or message queues (not named: they outlive the
    /// process). Where no cgroup counts memory (`shared` false), also no
    /// shared anonymous mapping and no memfd: `RLIMIT_DATA` counts private
    /// memory only.
    static func memory(shared: Bool) -> [SyscallRule] {
        var rules = SyscallRule.allow(["brk", "munmap", "mremap", "madvise", "mincore", "msync", "mlock", "mlock2",
                                       "munlock", "mlockall", "munlockall", "pkey_alloc", "pkey_free"])
        rules += [SyscallRule("mseal", number: 462), SyscallRule("map_shadow_stack", number: 453)]
        // No PROT_GROWSDOWN or PROT_GROWSUP either.
        rules += ["mprotect", "pkey_mprotect"].map { SyscallRule($0, when: [.bits(2, protGrowsDownOrUp, are: 0)]) }
        if shared {
            rules.append(SyscallRule("mmap", when: [.bits(3, mapGrowsDown, are: 0)]))
            rules += SyscallRule.allow(["memfd_create"])
        } else {
            // The type, MAP_ANONYMOUS and MAP_GROWSDOWN together: a file's
            // mapping of any type, or a private anonymous one.
            let mask = mapGrowsDown | mapAnonymous | mapSharedValidate
            for flags in [mapShared, mapPrivate, mapSharedValidate, mapAnonymous | mapPrivate] {
                rules.append(SyscallRule("mmap", when: [.bits(3, mask, are: flags)]))
            }
        }
        return rules
    }

    /// fcntl commands and ioctl requests by value. Never a lease (it would
    /// keep every other process from opening the file), `F_SETOWN` or
    /// `F_SETSIG` (a signal sent for it to another process), `F_NOTIFY`, or
    /// a larger pipe; locks only where it may write. ioctl: a terminal's
    /// and a descriptor's own settings; never `TIOCSTI`/`TIOCLINUX` (typing
    /// into its user's terminal), `TIOCSPGRP`, or inode flags
    /// (`FS_IOC_SETFLAGS`: immutable, append-only, no-atime).
    static func descriptors(readOnly: Bool, sharedMemory: Bool) -> [SyscallRule] {
        // F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK, F_GETOWN,
        // F_GETOWN_EX, F_OFD_GETLK (probes), F_GETLEASE, F_DUPFD_CLOEXEC,
        // F_GETPIPE_SZ, F_GET_SEALS.
        var commands: [UInt64] = [0, 1, 2, 3, 4, 5, 9, 16, 36, 1025, 1030, 1032, 1034]
        if !readOnly { commands += [6, 7, 37, 38] }  // F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
        if sharedMemory { commands.append(1033) }  // F_ADD_SEALS, for its memfds
        let requests: [UInt64] = [
            0x5401, 0x5402, 0x5403, 0x5404,  // TCGETS, TCSETS, TCSETSW, TCSETSF
            0x802C_542A, 0x402C_542B, 0x402C_542C, 0x402C_542D,  // the termios2 forms
            0x540B, 0x540F, 0x5411, 0x5413, 0x5429,  // TCFLSH, TIOCGPGRP, TIOCOUTQ, TIOCGWINSZ, TIOCGSID
            0x541B, 0x5421, 0x5450, 0x5451,  // FIONREAD, FIONBIO, FIONCLEX, FIOCLEX
            0x8008_6601,  // FS_IOC_GETFLAGS (reading them)
        ]
        return SyscallRule.allow("fcntl", argument: 1, in: commands) + SyscallRule.allow("ioctl", argument: 1, in: requests)
    }

    /// Sockets. A launch speaks to the host through the link it was handed
    /// (no `AF_UNIX` socket of its own: nothing on a Unix socket's path,
    /// the session's D-Bus, ssh-agent, an X server, is in reach); a pair
    /// only of the stream kind (a datagram pair can `sendto` any path).
    /// Online: IPv4, IPv6 and route netlink (getaddrinfo's). Offline:
    /// EACCES for every family but `AF_UNIX`.
    static func sockets(network: Bool, unixSockets: Bool) -> [SyscallRule] {
        var rules = SyscallRule.allow([
            "connect", "bind", "listen", "accept", "accept4", "getsockname", "getpeername", "sendto", "recvfrom",
            "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt",
        ])
        rules.append(SyscallRule("socketpair", when: [.int(0, is: UInt64(AF_UNIX)), .bits(1, 0xf, are: 1)]))
        if unixSockets { rules.append(SyscallRule("socket", when: [.int(0, is: UInt64(AF_UNIX))])) }
        if network {
            rules += SyscallRule.allow("socket", argument: 0, in: [UInt64(AF_INET), UInt64(AF_INET6)])
            rules.append(SyscallRule("socket", when: [.int(0, is: UInt64(AF_NETLINK)), .int(2, is: 0)]))  // NETLINK_ROUTE
        } else {
            rules.append(SyscallRule("socket", .fail(EACCES), when: [.word(0, isNot: UInt64(AF_UNIX))]))
        }
        return rules
    }
}
