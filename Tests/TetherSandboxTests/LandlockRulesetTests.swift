import Glibc
import Testing
import TetherTestSupport
@testable import TetherSandbox

/// Rules built ahead of a launch are used only while they are what a build
/// now would give. Policies here hide only the group's instance locks, in
/// the test's own directory (no other process's change to `/tmp` decides
/// the outcome).
@Suite(.timed) struct LandlockRulesetTests {
    static func policy(_ scratch: TemporaryDirectory, temporary: String?) -> SandboxPolicy {
        var policy = SandboxPolicy(role: .widget, openAccess: false, group: scratch.path + "/group",
                                   temporaryDirectory: temporary, memoryLimitMiB: nil)
        policy.hiddenTemporaryRoots = []
        return policy
    }

    @Test(.enabled(if: KernelSupport.current.landlockABI != nil, "needs Landlock"))
    func preparedRulesAreUsedOnlyForTheSamePolicyAndDirectory() throws {
        let scratch = try TemporaryDirectory("tether-ruleset")
        let spare = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: ".spare")
        let prepared = try #require(LandlockRuleset.prepare(Self.policy(scratch, temporary: spare), memoryByCgroup: false))
        #expect(prepared.hidden)
        // Renamed for its launch: the same directory, so the same rules.
        let renamed = try PrivateTemporaryDirectory.rename(spare, in: scratch.path + "/tmp", prefix: "widget")
        #expect(renamed.hasPrefix(scratch.path + "/tmp/widget.") && access(spare, F_OK) != 0)
        let used = Confinement(policy: Self.policy(scratch, temporary: renamed), prepared: prepared)
        #expect(used.usedPreparedRuleset)

        // Another policy (a secret of another group to hide): built anew.
        var other = Self.policy(scratch, temporary: renamed)
        other.otherSecrets = [scratch.path + "/.other.secrets"]
        other.groupWritable = false
        #expect(!Confinement(policy: other, prepared: prepared).usedPreparedRuleset)
        var limited = Self.policy(scratch, temporary: renamed)
        limited.network.toggle()
        #expect(!Confinement(policy: limited, prepared: prepared).usedPreparedRuleset)

        // Another directory under the name the rules were built for: built anew.
        #expect(rmdir(renamed) == 0 && mkdir(renamed, 0o700) == 0)
        #expect(!Confinement(policy: Self.policy(scratch, temporary: renamed), prepared: prepared).usedPreparedRuleset)
    }

    /// Where RLIMIT_DATA holds the memory limit, `/dev/zero` is not writable:
    /// rules built for a cgroup that counts all memory are not used without one.
    @Test(.enabled(if: KernelSupport.current.landlockABI != nil, "needs Landlock"))
    func rulesBuiltForACgroupAreNotUsedWithoutOne() throws {
        let scratch = try TemporaryDirectory("tether-ruleset")
        let temporary = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        var policy = Self.policy(scratch, temporary: temporary)
        policy.memoryLimitMiB = 64
        let prepared = try #require(LandlockRuleset.prepare(policy, memoryByCgroup: true))
        #expect(!Confinement(policy: policy, prepared: prepared).usedPreparedRuleset)
        let unlimited = try #require(LandlockRuleset.prepare(policy, memoryByCgroup: false))
        #expect(Confinement(policy: policy, prepared: unlimited).usedPreparedRuleset)
    }
}
