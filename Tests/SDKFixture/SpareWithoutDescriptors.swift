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
        let policy = ConfinementUnderShortage.keyboardPolicy(group: CommandLine.arguments[2])
        // Every descriptor but two taken (run it under a small `ulimit -n`).
        let held = ConfinementUnderShortage.holdAllBut(2)
        let prepared = LandlockRuleset.prepare(policy, memoryByCgroup: false)
        for fd in held { close(fd) }
        let confinement = Confinement(policy: policy, prepared: prepared)
        print("prepared \(prepared != nil) used \(confinement.usedPreparedRuleset) secretsHidden \(confinement.report.secretsHidden)")
        exit(0)
    }
}
