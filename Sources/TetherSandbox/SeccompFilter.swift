import CSeccomp
import CTetherSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The seccomp filters of confined extensions: each role's allowlist
/// (`SeccompPolicy`), built with libseccomp and kept as classic BPF, which
/// the spawn's child installs with one system call. Every refused call
/// fails with an errno (EPERM unless the policy says otherwise); nothing
/// is killed, and a call of another architecture (i386's `int 0x80`, x32)
/// fails with ENOSYS.
package enum SeccompFilter {
    /// The program for a role's policy, or nil if libseccomp could not
    /// build it. Built once per combination per process. `sharedMemory`
    /// false: memory no `RLIMIT_DATA` counts is refused too (where no
    /// cgroup holds the memory limit), `memfd_create` and shared anonymous
    /// mappings, with EPERM. `unixSockets`: `AF_UNIX` sockets stay allowed
    /// (a process started by hand, which has no link).
    package static func program(network: Bool, readOnly: Bool, sharedMemory: Bool = true,
                                unixSockets: Bool = false) -> [UInt8]? {
        let policy = SeccompPolicy(network: network, readOnly: readOnly, sharedMemory: sharedMemory,
                                   unixSockets: unixSockets)
        return built.withLock { cache in
            if let program = cache[policy] { return program }
            let program = build(policy)
            cache[policy] = program
            return program
        }
    }

    private static let built = Mutex<[SeccompPolicy: [UInt8]?]>([:])

    /// Whether the kernel takes seccomp filters.
    static var isAvailable: Bool { tether_seccomp_available() == 1 && program(network: true, readOnly: false) != nil }

    private static let refused = errnoAction(EPERM)

    private static func build(_ policy: SeccompPolicy) -> [UInt8]? {
        guard let context = seccomp_init(refused) else { return nil }
        defer { seccomp_release(context) }
        // A binary tree of the calls, not a list: each call is a few
        // comparisons whatever its place in the table.
        guard seccomp_attr_set(context, SCMP_FLTATR_ACT_BADARCH, errnoAction(ENOSYS)) == 0 else { return nil }
        _ = seccomp_attr_set(context, SCMP_FLTATR_CTL_OPTIMIZE, 2)
        for rule in policy.rules {
            let resolved = seccomp_syscall_resolve_name(rule.name)
            // Not on this architecture (`open` on aarch64): nothing to allow.
            guard let number = resolved >= 0 ? resolved : rule.number else { continue }
            let action: UInt32 = switch rule.action {
            case .allow: UInt32(SCMP_ACT_ALLOW)
            case .fail(let code): errnoAction(code)
            }
            // The default already: said in the table for the reader.
            if action == refused { continue }
            var conditions = rule.conditions.map {
                scmp_arg_cmp(arg: $0.argument, op: $0.notEqual ? SCMP_CMP_NE : SCMP_CMP_MASKED_EQ,
                             datum_a: $0.notEqual ? $0.value : $0.mask, datum_b: $0.notEqual ? 0 : $0.value)
            }
            let added = seccomp_rule_add_array(context, action, number, UInt32(conditions.count), &conditions)
            guard added == 0 else { return nil }
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
