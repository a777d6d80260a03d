import CTetherSystem
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// `spawn-without-unshare [clone]`: under a seccomp filter that refuses
/// `close_range` and `unshare` (or, with `clone`, a clone that shares the
/// descriptor table), as an outer sandbox's may, runs `/bin/echo one`,
/// then `/bin/echo two`, and prints what each printed, or the error: the
/// spawn's child can then take no table of its own, and the spawn must
/// fall back to copying the whole one.
enum SpawnWithoutUnshare {
    static func run() {
        #if arch(x86_64)
        let (closeRange, unshare, clone): (UInt32, UInt32, UInt32) = (436, 272, 56)
        #else
        let (closeRange, unshare, clone): (UInt32, UInt32, UInt32) = (436, 97, 220)
        #endif
        let refused: UInt32 = 0x0005_0000 | UInt32(EPERM)  // SECCOMP_RET_ERRNO
        let allowed: UInt32 = 0x7fff_0000                  // SECCOMP_RET_ALLOW
        // Classic BPF: the system call's number (offset 0), then one test
        // each; a clone's flags are its first argument's low word (offset 16).
        let program: [(code: UInt16, jt: UInt8, jf: UInt8, k: UInt32)] = CommandLine.arguments.dropFirst(2).first == "clone"
            ? [(0x20, 0, 0, 0),                   // ld [nr]
               (0x15, 0, 3, clone),               // jeq clone, else allow
               (0x20, 0, 0, 16),                  // ld [args[0] low]
               (0x45, 0, 1, 0x400),             // jset CLONE_FILES
               (0x06, 0, 0, refused),
               (0x06, 0, 0, allowed)]
            : [(0x20, 0, 0, 0),                   // ld [nr]
               (0x15, 0, 1, closeRange),          // jeq close_range
               (0x06, 0, 0, refused),
               (0x15, 0, 1, unshare),             // jeq unshare
               (0x06, 0, 0, refused),
               (0x06, 0, 0, allowed)]
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
