#if canImport(Glibc)
import Glibc
#endif

/// What a confined extension may ask of the kernel: an allowlist, group by
/// group, after systemd's `@system-service` and Chromium's baseline
/// policy, trimmed to what the SDK, Python, a shell and coreutils use.
/// Anything not named fails with EPERM (the filter's default), so a call
/// a newer kernel adds is refused until it is named here.
///
/// Files are Landlock's to govern (which paths); this list governs what
/// Landlock cannot see: metadata, locks, leases, other processes, kinds of
/// memory a limit does not count, sockets, and the kernel's other doors.
/// The enforcement table in docs/security.md names the test for each group.
struct SeccompPolicy: Sendable, Hashable {
    /// TCP, UDP and route netlink sockets (else: no socket but a pair).
    var network: Bool
    /// The group is read-only to it: no locks, no timestamps.
    var readOnly: Bool
    /// A cgroup counts its memory: shared memory is allowed (else only
    /// what `RLIMIT_DATA` counts).
    var sharedMemory: Bool
    /// `AF_UNIX` sockets by path: a process started by hand, which has no
    /// link and reaches hosts by the socket's path.
    var unixSockets: Bool

    var rules: [SyscallRule] {
        var rules = Self.everyRole
        rules += Self.memory(shared: sharedMemory)
        rules += Self.descriptors(readOnly: readOnly, sharedMemory: sharedMemory)
        rules += Self.sockets(network: network, unixSockets: unixSockets)
        if !readOnly { rules += Self.writerMetadata }
        rules += Self.fileMask
        return rules
    }

    /// umask stays 077 (the spawn sets it): a call for any other mask
    /// "succeeds" (0, as for a mask of 0 before) and changes nothing, so
    /// no role makes a group- or world-readable file or directory (a store
    /// so made is refused by every reader), and no program fails for
    /// asking.
    static var fileMask: [SyscallRule] {
        [SyscallRule("umask", when: [.int(0, is: 0o077)]), SyscallRule("umask", .fail(0), when: [.word(0, isNot: 0o077)])]
    }

    /// What a role that may write the group may also do to what it may
    /// write: lock it (a read lock on a group lock file would keep every
    /// holder out, so a read-only role may not), set its times (`touch`,
    /// `cp -p`, `tar`), and give it a mode of the owner's bits alone (git's
    /// and gzip's chmod of their own files): never a group or world bit,
    /// which would show the user's files (the credentials) to other users,
    /// nor setuid, setgid or sticky. Extensions run under umask 077, so
    /// what they make is the owner's alone to begin with.
    static var writerMetadata: [SyscallRule] {
        let ownerOnly: UInt64 = 0o7077
        return SyscallRule.allow(["flock", "utimensat", "utimes", "utime", "futimesat"]) + [
            SyscallRule("chmod", when: [.bits(1, ownerOnly, are: 0)]),
            SyscallRule("fchmod", when: [.bits(1, ownerOnly, are: 0)]),
            SyscallRule("fchmodat", when: [.bits(2, ownerOnly, are: 0)]),
            SyscallRule("fchmodat2", number: 452, when: [.bits(2, ownerOnly, are: 0)]),
        ]
    }

    /// Every role, whatever its policy.
    static let everyRole: [SyscallRule] =
        processes + signals + time + basicIO + events + files + selfOnly + prctl + refusedWithFallback

    /// Its own life and its children's. No `setsid` or `setpgid`: every
    /// process of a launch stays in its process group, where a stop reaches
    /// it. `clone` without namespace flags (no `unshare`, `setns`) or
    /// `CLONE_PARENT`.
    static let processes: [SyscallRule] = SyscallRule.allow([
        "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "fork", "vfork",
        "set_tid_address", "set_robust_list", "get_robust_list", "rseq", "arch_prctl", "restart_syscall",
        "getpid", "gettid", "getppid", "getpgid", "getpgrp", "getsid", "getuid", "geteuid", "getgid", "getegid",
        "getresuid", "getresgid", "getgroups", "capget", "uname", "sysinfo", "getrusage", "times",
        "getcpu", "sched_yield", "getrandom", "futex", "membarrier",
        // Further confinement of itself only narrows what it may do.
        "seccomp",
    ]) + [
        // CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET,
        // and CLONE_PARENT (a child of the host's, not its own).
        SyscallRule("clone", when: [.bits(0, 0x7E02_8000, are: 0)]),
        // Only the query (0xffffffff): no execution domain of its own.
        SyscallRule("personality", when: [.int(0, is: 0xffff_ffff)]),
        SyscallRule("futex_waitv", number: 449), SyscallRule("futex_wake", number: 454),
        SyscallRule("futex_wait", number: 455), SyscallRule("futex_requeue", number: 456),
        SyscallRule("landlock_create_ruleset", number: 444), SyscallRule("landlock_add_rule", number: 445),
        SyscallRule("landlock_restrict_self", number: 446),
    ]

    /// Signals: Landlock scopes them to its own sandbox (Linux 6.12+). A
    /// filter cannot refuse `kill(-1, …)` alone: the kernel reads the pid's
    /// lower half, and libseccomp compares a masked half for equality only.
    static let signals: [SyscallRule] = SyscallRule.allow([
        "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend",
        "sigaltstack", "signalfd", "signalfd4", "pause", "alarm", "kill", "tkill", "tgkill", "rt_sigqueueinfo",
        "rt_tgsigqueueinfo",
    ])

    /// Clocks and timers of its own (no `settimeofday`, `clock_settime`,
    /// `adjtimex`).
    static let time: [SyscallRule] = SyscallRule.allow([
        "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
        "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
        "timerfd_create", "timerfd_settime", "timerfd_gettime", "getitimer", "setitimer",
    ])

    static let basicIO: [SyscallRule] = SyscallRule.allow([
        "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
        "lseek", "close", "dup", "dup2", "dup3", "sendfile", "splice", "tee", "vmsplice", "copy_file_range",
        "fsync", "fdatasync", "syncfs", "sync_file_range", "fadvise64", "readahead", "pipe", "pipe2",
    ]) + [SyscallRule("close_range", number: 436)]

    static let events: [SyscallRule] = SyscallRule.allow([
        "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "poll", "ppoll", "select",
        "pselect6", "eventfd", "eventfd2", "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
    ]) + [SyscallRule("epoll_pwait2", number: 441)]

    /// Paths: Landlock decides which. Reading metadata is free; changing it
    /// is not (Landlock does not cover it, and seccomp cannot see paths):
    /// no owner, extended attribute or inode flag anywhere, and modes and
    /// times only for roles that may write (`writerMetadata`). Special
    /// files: FIFOs only.
    static let files: [SyscallRule] = SyscallRule.allow([
        "open", "openat", "creat", "stat", "lstat", "fstat", "newfstatat", "statx", "statfs", "fstatfs",
        "access", "faccessat", "readlink", "readlinkat", "getdents", "getdents64", "mkdir", "mkdirat", "rmdir",
        "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
        "truncate", "ftruncate", "fallocate", "chdir", "fchdir", "getcwd",
        "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    ]) + [
        SyscallRule("openat2", number: 437), SyscallRule("faccessat2", number: 439),
        SyscallRule("cachestat", number: 451), SyscallRule("getxattrat", number: 464),
        SyscallRule("listxattrat", number: 465), SyscallRule("file_getattr", number: 468),
        // S_IFIFO of S_IFMT (mkfifo); no device, no socket file.
        SyscallRule("mknod", when: [.bits(1, 0xF000, are: 0x1000)]),
        SyscallRule("mknodat", when: [.bits(2, 0xF000, are: 0x1000)]),
    ]

    /// Calls that take a pid or a process group: on itself only (0), or
    /// reading. `prlimit` or the scheduler on another process would retune
    /// the host (a CPU limit of one second kills it).
    static let selfOnly: [SyscallRule] = SyscallRule.allow([
        "getrlimit", "setrlimit", "sched_getaffinity", "sched_getparam", "sched_getscheduler", "sched_getattr",
        "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "getpriority", "ioprio_get",
        "get_mempolicy", "set_mempolicy", "mbind",
    ]) + [
        SyscallRule("prlimit64", when: [.int(0, is: 0)]),
        SyscallRule("prlimit64", when: [.word(2, is: 0)]),  // no new limit: a query
        SyscallRule("sched_setaffinity", when: [.int(0, is: 0)]),
        SyscallRule("sched_setparam", when: [.int(0, is: 0)]),
        SyscallRule("sched_setscheduler", when: [.int(0, is: 0)]),
        SyscallRule("sched_setattr", when: [.int(0, is: 0)]),
        // PRIO_PROCESS and PRIO_PGRP (its own group), never PRIO_USER.
        SyscallRule("setpriority", when: [.int(0, is: 0), .int(1, is: 0)]),
        SyscallRule("setpriority", when: [.int(0, is: 1), .int(1, is: 0)]),
        // IOPRIO_WHO_PROCESS and IOPRIO_WHO_PGRP, on itself.
        SyscallRule("ioprio_set", when: [.int(0, is: 1), .int(1, is: 0)]),
        SyscallRule("ioprio_set", when: [.int(0, is: 2), .int(1, is: 0)]),
    ]

    /// prctl's options about the caller itself (names, death signal,
    /// dumpability, no-new-privileges, its own capability queries).
    static let prctl: [SyscallRule] = SyscallRule.allow("prctl", argument: 0, in: [
        1, 2, 3, 4, 7, 15, 16, 21, 22, 23, 24, 27, 29, 30, 36, 37, 38, 39, 40, 41, 42, 47, 52, 53, 65, 66,
        0x5356_4d41,  // PR_SET_VMA (glibc names its mappings)
        0x5961_6d61,  // PR_SET_PTRACER (who may trace it: never the other way)
    ])

    /// Newer ways to do what is refused, with a fallback the caller knows:
    /// ENOSYS, as a kernel without them answers. `clone3`'s
    /// CLONE_INTO_CGROUP would start a child in another cgroup, and seccomp
    /// cannot read its flags; io_uring and Linux AIO would make sockets
    /// and I/O without the calls above; a pidfd reaches any process.
    static let refusedWithFallback: [SyscallRule] = [
        SyscallRule("clone3", number: 435, .fail(ENOSYS)),
        SyscallRule("io_uring_setup", number: 425, .fail(ENOSYS)),
        SyscallRule("io_uring_enter", number: 426, .fail(ENOSYS)),
        SyscallRule("io_uring_register", number: 427, .fail(ENOSYS)),
        SyscallRule("pidfd_open", number: 434, .fail(ENOSYS)),
        SyscallRule("pidfd_send_signal", number: 424, .fail(ENOSYS)),
    ] + SyscallRule.fail(["io_setup", "io_submit", "io_getevents", "io_pgetevents", "io_cancel", "io_destroy"], ENOSYS)
}
