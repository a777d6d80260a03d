import CTetherSystem
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// `spawn-without-unshare`: under a seccomp filter that refuses
/// `close_range` and `unshare` (as an outer sandbox's may), runs
/// `/bin/echo one`, then `/bin/echo two`, and prints what each printed, or
/// the error: the spawn's child can then take no table of its own, and the
/// spawn must fall back to copying the whole one.
enum SpawnWithoutUnshare {
    static func run() {
        #if arch(x86_64)
        let (closeRange, unshare): (UInt32, UInt32) = (436, 272)
        #else
        let (closeRange, unshare): (UInt32, UInt32) = (436, 97)
        #endif
        let refused: UInt32 = 0x0005_0000 | UInt32(EPERM)  // SECCOMP_RET_ERRNO
        // Classic BPF: the system call's number, then one test each.
        let program: [(code: UInt16, jt: UInt8, jf: UInt8, k: UInt32)] = [
            (0x20, 0, 0, 0),              // ld [nr]
            (0x15, 0, 1, closeRange),     // jeq close_range
            (0x06, 0, 0, refused),
            (0x15, 0, 1, unshare),        // jeq unshare
            (0x06, 0, 0, refused),
            (0x06, 0, 0, 0x7fff_0000),    // SECCOMP_RET_ALLOW
        ]
        var bytes: [UInt8] = []
        for instruction in program {
            bytes += [UInt8(instruction.code & 0xff), UInt8(instruction.code >> 8), instruction.jt, instruction.jf]
            bytes += (0..<4).map { UInt8(truncatingIfNeeded: instruction.k >> (8 * $0)) }
        }
        let rc = SpawnConfinement(seccompFilter: bytes).withConfinement { applied in
            withUnsafePointer(to: applied) { tether_confine_self($0) }
        }
        guard rc == 0 else {
            print("cannot install the filter: errno \(-rc)")
            exit(1)
        }
        for word in ["one", "two"] {
            do {
                let output = try CommandOutput.run("/bin/echo", [word])
                print(String(decoding: output.standardOutput, as: UTF8.self), terminator: "")
            } catch {
                print("\(word): \(error)")
            }
        }
        exit(0)
    }
}
