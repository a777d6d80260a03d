import SystemPackage
import TetherLoop
import TetherSandbox

/// Launches' Landlock rulesets built ahead, one per kind of policy: a
/// launch takes its kind's, and the next is built on the loop's next turn,
/// while the extension starts. A launch then does not wait for the
/// hundreds of read rules `ReadGrants` adds (one per entry of `/tmp`).
///
/// Each spare comes with an empty temporary directory of its own
/// (`.spare.XXXXXX` beside the launches'), which the launch renames to
/// `NAME.XXXXXX`: a rule follows the directory, not its name. `Confinement`
/// uses a spare only if it is what a build now would give, and builds
/// anew otherwise (the renamed directory is still the launch's).
final class SpareRulesets {
    struct Spare {
        /// The policy it was built for, its temporary directory the spare's.
        let policy: SandboxPolicy
        let ruleset: LandlockRuleset
        var temporaryDirectory: String { policy.temporaryDirectory ?? "" }
    }

    /// The name spares' temporary directories start with: no extension's
    /// name starts with a dot.
    static let prefix = ".spare"
    /// Kinds of policy kept ready at once (roles, open access, limits).
    static let kinds = 4

    private let support: KernelSupport
    private let timer: LoopTimer
    private var spares: [Spare] = []
    private var wanted: [(policy: SandboxPolicy, memoryByCgroup: Bool, parent: String)] = []

    init(loop: EventLoop, support: KernelSupport) {
        self.support = support
        timer = LoopTimer(loop: loop)
    }

    /// The spare built for `policy`'s kind, if there is one; the caller
    /// owns it (and its temporary directory) from then on.
    func take(for policy: SandboxPolicy) -> Spare? {
        guard let index = spares.firstIndex(where: { $0.policy.kind == policy.kind }) else { return nil }
        return spares.remove(at: index)
    }

    /// Builds a spare for `policy`'s kind in `parent` on the loop's next
    /// turn, unless one is there or on its way.
    func refill(_ policy: SandboxPolicy, memoryByCgroup: Bool, in parent: String) {
        guard support.landlockABI != nil, !timer.isClosed, !spares.contains(where: { $0.policy.kind == policy.kind }),
              !wanted.contains(where: { $0.policy.kind == policy.kind }) else { return }
        wanted.append((policy, memoryByCgroup, parent))
        guard !timer.isActive else { return }
        timer.start(afterMilliseconds: 0) { [weak self] in self?.build() }
    }

    private func build() {
        let wanted = self.wanted
        self.wanted.removeAll()
        for (policy, memoryByCgroup, parent) in wanted {
            guard let temporary = try? PrivateTemporaryDirectory.make(in: parent, prefix: Self.prefix) else { continue }
            var spare = policy
            spare.temporaryDirectory = temporary
            guard let ruleset = LandlockRuleset.prepare(spare, support: support, memoryByCgroup: memoryByCgroup) else {
                try? PrivateTemporaryDirectory.remove(temporary)
                continue
            }
            spares.insert(Spare(policy: spare, ruleset: ruleset), at: 0)
            while spares.count > Self.kinds { Self.discard(spares.removeLast()) }
        }
    }

    /// At shutdown: every spare closed and its directory removed.
    func removeAll() {
        timer.close()
        wanted.removeAll()
        for spare in spares { Self.discard(spare) }
        spares.removeAll()
    }

    static func discard(_ spare: Spare) {
        try? PrivateTemporaryDirectory.remove(spare.temporaryDirectory)
    }
}
