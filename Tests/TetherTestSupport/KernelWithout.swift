import Foundation

/// A confinement mechanism a kernel may lack.
package enum KernelMechanism: String, Sendable {
    /// Landlock: its system calls answer ENOSYS, as before Linux 5.13 (or
    /// where a container's profile refuses them).
    case landlock
    /// seccomp filters: `seccomp(2)` answers ENOSYS and
    /// `prctl(PR_GET_SECCOMP/PR_SET_SECCOMP)` EINVAL, as in a kernel built
    /// without `CONFIG_SECCOMP`.
    case seccomp
    /// User namespaces: `clone` and `unshare` with `CLONE_NEWUSER` answer
    /// EPERM (and `clone3`, whose flags a filter cannot read, ENOSYS), as
    /// where a sysctl or an AppArmor policy refuses them.
    case namespaces
}

/// The command prefix that runs a program on this kernel as a kernel
/// without `mechanisms` would look to it: a small Python program (given
/// inline: no file to plant or leave) installs a seccomp filter that
/// answers those system calls as such a kernel does, then execs the
/// program (same pid). The shipped code has no switch for this; it sees
/// only what the kernel says.
package func withoutMechanisms(_ mechanisms: [KernelMechanism]) -> [String] {
    ["/usr/bin/env", "python3", "-c", KernelWithout.source, mechanisms.map(\.rawValue).joined(separator: ",")]
}

/// `tether ARGS` started in the background as on a kernel without `mechanisms`.
package func startTether(_ arguments: [String], without mechanisms: [KernelMechanism],
                         environment: [String: String]? = nil) throws -> TestProcess {
    guard !mechanisms.isEmpty else { return try startTether(arguments, environment: environment) }
    let prefix = withoutMechanisms(mechanisms)
    return try TestProcess(prefix[0], Array(prefix.dropFirst()) + [tetherExecutable] + arguments, environment: environment)
}

/// Runs `tether ARGS` as on a kernel without `mechanisms`.
package func tether(_ arguments: [String], without mechanisms: [KernelMechanism], timeout: Double = 30) throws -> CommandResult {
    let prefix = withoutMechanisms(mechanisms)
    return try runCommand(prefix[0], Array(prefix.dropFirst()) + [tetherExecutable] + arguments, timeout: timeout)
}

enum KernelWithout {
    /// `python3 -c` gives it `sys.argv[1:]`: the mechanisms, then the command.
    static let source = """
        import ctypes, os, struct, sys
        mechanisms, command = set(sys.argv[1].split(",")), sys.argv[2:]
        arch, seccomp_nr, prctl_nr = {"x86_64": (0xC000003E, 317, 157), "aarch64": (0xC00000B7, 277, 167)}[os.uname().machine]
        LD, JEQ, RET, ALLOW, ERRNO, ENOSYS, EINVAL = 0x20, 0x15, 0x06, 0x7FFF0000, 0x00050000, 38, 22
        body = [(LD, 0, 0, 0)]  # seccomp_data.nr
        calls = [(444, ENOSYS), (445, ENOSYS), (446, ENOSYS)] if "landlock" in mechanisms else []
        if "seccomp" in mechanisms:
            calls.append((seccomp_nr, ENOSYS))
        for nr, code in calls:
            body += [(JEQ, 0, 1, nr), (RET, 0, 0, ERRNO | code)]
        if "seccomp" in mechanisms:
            # prctl(PR_GET_SECCOMP = 21 or PR_SET_SECCOMP = 22): EINVAL.
            body += [(JEQ, 0, 4, prctl_nr), (LD, 0, 0, 16), (JEQ, 1, 0, 21), (JEQ, 0, 1, 22), (RET, 0, 0, ERRNO | EINVAL)]
        if "namespaces" in mechanisms:
            clone_nr, unshare_nr = {"x86_64": (56, 272), "aarch64": (220, 97)}[os.uname().machine]
            JSET, EPERM, NEWUSER = 0x45, 1, 0x10000000
            body += [(JEQ, 0, 1, 435), (RET, 0, 0, ERRNO | ENOSYS)]
            for nr in (clone_nr, unshare_nr):
                body += [(JEQ, 0, 4, nr), (LD, 0, 0, 16), (JSET, 0, 1, NEWUSER), (RET, 0, 0, ERRNO | EPERM), (LD, 0, 0, 0)]
        program = [(LD, 0, 0, 4), (JEQ, 0, len(body), arch)] + body + [(RET, 0, 0, ALLOW)]
        packed = b"".join(struct.pack("<HBBI", *instruction) for instruction in program)
        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
        libc = ctypes.CDLL(None, use_errno=True)
        fprog = Program(len(program), packed)
        ulong = ctypes.c_ulong
        if (libc.prctl(38, ulong(1), ulong(0), ulong(0), ulong(0)) != 0
                or libc.prctl(22, ulong(2), ctypes.byref(fprog), ulong(0), ulong(0)) != 0):
            sys.exit("kernel-without: cannot install the filter: " + os.strerror(ctypes.get_errno()))
        os.execvp(command[0], command)
        """
}
