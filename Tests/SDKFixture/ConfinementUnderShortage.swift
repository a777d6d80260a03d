import TetherSandbox
#if canImport(Glibc)
import Glibc
#endif

/// Rules made while descriptors run short (run these under a small
/// `ulimit -n`; GROUP's secrets must exist):
/// - `confine-without-descriptors GROUP`: a read-only keyboard's rules
///   made with two descriptors left: `shortage BOOL secretsHidden BOOL`.
/// - `grants-after-shortage GROUP PROBE`: a keyboard's rules made once
///   (their listings kept), then made again, for another hidden path,
///   with four descriptors left, so that a listing (of `/` or `/tmp`,
///   whichever comes first) runs short, lets go of what is kept and tries
///   again; then applied to this process: `shortage BOOL etcReadable BOOL
///   probeReadable BOOL` (PROBE: a file in `/tmp`).
enum ConfinementUnderShortage {
    static func run(_ mode: String) {
        let probe = CommandLine.arguments.count == 4 ? CommandLine.arguments[3] : nil
        guard CommandLine.arguments.count == (mode == "grants-after-shortage" ? 4 : 3) else {
            print("usage: SDKFixture \(mode) GROUP\(mode == "grants-after-shortage" ? " PROBE" : "")")
            exit(2)
        }
        var policy = keyboardPolicy(group: CommandLine.arguments[2])
        if mode == "confine-without-descriptors" {
            let held = holdAllBut(2)
            let confinement = Confinement(policy: policy)
            for fd in held { close(fd) }
            print("shortage \(confinement.shortage != nil) secretsHidden \(confinement.report.secretsHidden)")
            exit(0)
        }
        _ = Confinement(policy: policy)
        policy.hiddenTemporaryRoots.append("/opt/tether-fixture-none/hidden")
        let held = holdAllBut(4)
        let confinement = Confinement(policy: policy)
        for fd in held { close(fd) }
        guard confinement.shortage == nil else {
            print("shortage true etcReadable - probeReadable -")
            exit(0)
        }
        do { try confinement.applyToSelf() } catch {
            print("cannot apply: \(error)")
            exit(1)
        }
        let readable = ["/etc/passwd", probe ?? ""].map { path in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { close(fd) }
            return fd >= 0
        }
        print("shortage false etcReadable \(readable[0]) probeReadable \(readable[1])")
        exit(0)
    }

    /// A read-only keyboard of `group`, its secrets beside it.
    static func keyboardPolicy(group: String) -> SandboxPolicy {
        var policy = SandboxPolicy(role: .keyboard, openAccess: false, group: group, temporaryDirectory: nil,
                                   memoryLimitMiB: nil)
        let cut = group.lastIndex(of: "/").map { group[..<$0] } ?? ""
        policy.secrets = "\(cut)/.\(group.split(separator: "/").last ?? "").secrets"
        return policy
    }

    /// Takes every descriptor but `left`; the caller closes them.
    static func holdAllBut(_ left: Int) -> [Int32] {
        var held: [Int32] = []
        while held.count < 100_000 {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { break }
            held.append(fd)
        }
        for fd in held.suffix(left) { close(fd) }
        return Array(held.dropLast(left))
    }
}
