import CSeccomp
import CTetherSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The seccomp filters of confined extensions, built with libseccomp and
/// kept as classic BPF, which the spawn's child installs with one system
/// call. Every refused call fails with an errno; nothing is killed.
///
/// Every role: no `ptrace`, `process_vm_readv`/`writev` or `pidfd_getfd`
/// (Landlock scopes ptrace too, but not the other two); no `setsid` or
/// `setpgid`, so every process of a launch stays in its process group,
/// where a stop reaches it; and no `TIOCSTI` or
/// `TIOCLINUX` (typing into the terminal of whoever started it by hand),
/// and no `clone3` (ENOSYS: libc falls back to `clone`): its
/// `CLONE_INTO_CGROUP` would start a child in any cgroup the extension can
/// open a directory of, out of its own, and seccomp cannot see into the
/// structure that carries the flag.
/// No `AF_UNIX` socket (EPERM; socket pairs stay): a launch speaks to the
/// host only through the link it was handed at spawn (one started by hand,
/// which has none, keeps them).
/// io_uring, whose requests would make sockets without the `socket`
/// system call, fails with ENOSYS (for one started by hand, offline only).
/// Offline: a socket of any family but `AF_UNIX` fails with EACCES (TCP,
/// UDP, raw, packet, netlink). Read-only: no
/// change of a file's mode, owner, extended attributes or times (Landlock
/// does not cover them), so `chmod 644 GROUP/defaults.json` fails, and
/// no lock (`flock`, fcntl's lock-setting commands; queries stay).
/// Memory limited by `RLIMIT_DATA` alone: no `memfd_create` and no shared
/// anonymous mapping, which that limit does not count.
public enum SeccompFilter {
    /// The program for a role's policy, or nil if libseccomp could not
    /// build it. Built once per combination per process. `sharedMemory`
    /// false: memory no `RLIMIT_DATA` counts is refused too (where no
    /// cgroup holds the memory limit), `memfd_create` and shared anonymous
    /// mappings, with EPERM. `unixSockets`: `AF_UNIX` sockets stay allowed
    /// (a process started by hand, which has no link).
    public static func program(network: Bool, readOnly: Bool, sharedMemory: Bool = true,
                               unixSockets: Bool = false) -> [UInt8]? {
        let key = (network ? 1 : 0) | (readOnly ? 2 : 0) | (sharedMemory ? 4 : 0) | (unixSockets ? 8 : 0)
        return built.withLock { cache in
            if let program = cache[key] { return program }
            let program = build(network: network, readOnly: readOnly, sharedMemory: sharedMemory, unixSockets: unixSockets)
            cache[key] = program
            return program
        }
    }

    private static let built = Mutex<[Int: [UInt8]?]>([:])

    /// Whether the kernel takes seccomp filters.
    static var isAvailable: Bool { tether_seccomp_available() == 1 && program(network: true, readOnly: false) != nil }

    // Newer than libseccomp 2.5's tables; the same number on every
    // architecture (the unified table since Linux 5.1).
    private static let fchmodat2: Int32 = 452
    private static let setxattrat: Int32 = 463
    private static let removexattrat: Int32 = 466
    private static let clone3: Int32 = 435

    private static func build(network: Bool, readOnly: Bool, sharedMemory: Bool, unixSockets: Bool) -> [UInt8]? {
        guard let context = seccomp_init(UInt32(SCMP_ACT_ALLOW)) else { return nil }
        defer { seccomp_release(context) }
        func refuse(_ names: [String], _ code: Int32, extra: [Int32] = []) -> Bool {
            let numbers = names.map { seccomp_syscall_resolve_name($0) }.filter { $0 >= 0 } + extra
            return numbers.allSatisfy { seccomp_rule_add_array(context, errnoAction(code), $0, 0, nil) == 0 }
        }
        guard refuse(["ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "setsid", "setpgid"], EPERM),
              refuse([], ENOSYS, extra: [clone3]) else { return nil }
        let ioctl = seccomp_syscall_resolve_name("ioctl")
        for request in [0x5412, 0x541C] as [UInt64] {  // TIOCSTI, TIOCLINUX
            var matches = scmp_arg_cmp(arg: 1, op: SCMP_CMP_MASKED_EQ, datum_a: 0xffff_ffff, datum_b: request)
            guard seccomp_rule_add_array(context, errnoAction(EPERM), ioctl, 1, &matches) == 0 else { return nil }
        }
        // No Unix socket of its own (EPERM): a launch speaks to the host
        // through the link it was handed, and the group's socket and the
        // session's services stay out of reach. Socket pairs stay (libuv's
        // and libcurl's own plumbing). The kernel reads the domain as an
        // int: the upper half of the register is masked off, as it does.
        let socket = seccomp_syscall_resolve_name("socket")
        var unix = scmp_arg_cmp(arg: 0, op: SCMP_CMP_MASKED_EQ, datum_a: 0xffff_ffff, datum_b: scmp_datum_t(AF_UNIX))
        guard unixSockets || seccomp_rule_add_array(context, errnoAction(EPERM), socket, 1, &unix) == 0 else { return nil }
        // io_uring makes and connects sockets without the `socket` system
        // call (IORING_OP_SOCKET): none where sockets are refused (ENOSYS).
        if !network || !unixSockets {
            guard refuse(["io_uring_setup", "io_uring_enter", "io_uring_register"], ENOSYS) else { return nil }
        }
        if !network {
            var notUnix = scmp_arg_cmp(arg: 0, op: SCMP_CMP_NE, datum_a: scmp_datum_t(AF_UNIX), datum_b: 0)
            guard seccomp_rule_add_array(context, errnoAction(EACCES), socket, 1, &notUnix) == 0 else { return nil }
        }
        if readOnly {
            guard refuse(["chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
                          "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
                          "utime", "utimes", "futimesat", "utimensat"], EPERM,
                         extra: [fchmodat2, setxattrat, removexattrat]) else { return nil }
            // No lock of any kind: a read lock on a group lock file would keep
            // every holder from it. F_OFD_GETLK (36) stays: probes query.
            guard refuse(["flock"], EPERM) else { return nil }
            let fcntl = seccomp_syscall_resolve_name("fcntl")
            for command in [6, 7, 37, 38] as [UInt64] {  // F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
                // An unsigned int to the kernel: the upper half is masked off.
                var matches = scmp_arg_cmp(arg: 1, op: SCMP_CMP_MASKED_EQ, datum_a: 0xffff_ffff, datum_b: command)
                guard seccomp_rule_add_array(context, errnoAction(EPERM), fcntl, 1, &matches) == 0 else { return nil }
            }
        }
        if !sharedMemory {
            guard refuse(["memfd_create", "memfd_secret"], EPERM) else { return nil }
            // MAP_ANONYMOUS with MAP_SHARED or MAP_SHARED_VALIDATE (the type bits).
            for type in [0x01, 0x03] as [UInt64] {
                var matches = scmp_arg_cmp(arg: 3, op: SCMP_CMP_MASKED_EQ, datum_a: 0x2f, datum_b: 0x20 | type)
                guard seccomp_rule_add_array(context, errnoAction(EPERM), seccomp_syscall_resolve_name("mmap"), 1,
                                             &matches) == 0 else { return nil }
            }
        }
        return export(context)
    }

    /// Through a pipe: libseccomp 2.5 has no export to memory.
    private static func export(_ context: scmp_filter_ctx) -> [UInt8]? {
        var ends: [Int32] = [-1, -1]
        guard tether_pipe(&ends) == 0 else { return nil }
        defer { close(ends[0]) }
        let exported = seccomp_export_bpf(context, ends[1])
        close(ends[1])
        guard exported == 0 else { return nil }
        var program: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            program += chunk[0..<count]
        }
        guard !program.isEmpty, program.count % 8 == 0, program.count / 8 <= Int(UInt16.max) else { return nil }
        return program
    }

    private static func errnoAction(_ code: Int32) -> UInt32 { 0x0005_0000 | (UInt32(code) & 0xffff) }
}
