import CSeccomp
import CTetherSystem
#if canImport(Glibc)
import Glibc
#endif

/// The seccomp filter of an offline extension, built with libseccomp: a
/// socket of any family but `AF_UNIX` fails with EACCES (TCP, UDP, raw,
/// packet, netlink), and io_uring, whose requests would make sockets without
/// the `socket` system call, is refused (ENOSYS: programs fall back).
///
/// Built once per process and kept as classic BPF, which the spawn's child
/// installs with one system call.
public enum NetworkFilter {
    /// The program's instructions (8 bytes each), or nil if libseccomp could
    /// not build it.
    public static let program: [UInt8]? = build()

    /// Whether the kernel takes seccomp filters.
    static var isAvailable: Bool {
        tether_seccomp_available() == 1 && program != nil
    }

    private static func build() -> [UInt8]? {
        guard let context = seccomp_init(UInt32(SCMP_ACT_ALLOW)) else { return nil }
        defer { seccomp_release(context) }
        var notUnix = scmp_arg_cmp(arg: 0, op: SCMP_CMP_NE, datum_a: scmp_datum_t(AF_UNIX), datum_b: 0)
        guard seccomp_rule_add_array(context, errnoAction(EACCES), socketNumber("socket"), 1, &notUnix) == 0,
              seccomp_rule_add_array(context, errnoAction(ENOSYS), socketNumber("io_uring_setup"), 0, nil) == 0
        else { return nil }
        // Exported through a pipe: libseccomp 2.5 has no export to memory.
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

    private static func socketNumber(_ name: String) -> Int32 { seccomp_syscall_resolve_name(name) }
}
