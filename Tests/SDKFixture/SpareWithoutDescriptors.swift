import TetherSandbox
#if canImport(Glibc)
import Glibc
#endif

/// `spare-without-descriptors GROUP`: builds a read-only keyboard's rules
/// ahead (as the host's spares are) while the process has two descriptors
/// left, then, with them back, says what a launch would make of them:
/// `prepared BOOL used BOOL secretsHidden BOOL`. GROUP's secrets must exist.
enum SpareWithoutDescriptors {
    static func run() {
        guard CommandLine.arguments.count == 3 else {
            print("usage: SDKFixture spare-without-descriptors GROUP")
            exit(2)
        }
        let group = CommandLine.arguments[2]
        var policy = SandboxPolicy(role: .keyboard, openAccess: false, group: group, temporaryDirectory: nil,
                                   memoryLimitMiB: nil)
        let cut = group.lastIndex(of: "/").map { group[..<$0] } ?? ""
        policy.secrets = "\(cut)/.\(group.split(separator: "/").last ?? "").secrets"
        // Every descriptor but two taken (run it under a small `ulimit -n`).
        var held: [Int32] = []
        while held.count < 100_000 {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { break }
            held.append(fd)
        }
        for fd in held.suffix(2) { close(fd) }
        let prepared = LandlockRuleset.prepare(policy, memoryByCgroup: false)
        for fd in held.dropLast(2) { close(fd) }
        let confinement = Confinement(policy: policy, prepared: prepared)
        print("prepared \(prepared != nil) used \(confinement.usedPreparedRuleset) secretsHidden \(confinement.report.secretsHidden)")
        exit(0)
    }
}
