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
        let scratch = try Self.scratch()
        var found: LandlockRuleset?
        var renamed = ""
        for _ in 0..<5 {
            let before = Self.stamps(above: scratch)
            let spare = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: ".spare")
            let rules = try #require(LandlockRuleset.prepare(Self.policy(scratch, temporary: spare), memoryByCgroup: false))
            #expect(rules.hidden)
            // Renamed for its launch: the same directory, so the same rules.
            let name = try PrivateTemporaryDirectory.rename(spare, in: scratch.path + "/tmp", prefix: "widget")
            #expect(name.hasPrefix(scratch.path + "/tmp/widget.") && access(spare, F_OK) != 0)
            let used = Confinement(policy: Self.policy(scratch, temporary: name), prepared: rules)
            guard Self.unchanged(before) else { rmdir(name); continue }
            #expect(used.usedPreparedRuleset)
            (found, renamed) = (rules, name)
            break
        }
        let prepared = try #require(found, "a directory above the scratch changed in each of 5 rounds")

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

    /// The rules stamp each listing on the way to what they hide: another
    /// test's file in `/tmp` between two steps rightly makes them stale. So
    /// the scratch is where tests write nothing (`/dev/shm`, if it can be
    /// written), and a round in which a directory above it changed anyway
    /// is tried again (at most 5 times): only a round with them unchanged decides.
    static func scratch() throws -> TemporaryDirectory {
        try TemporaryDirectory("tether-ruleset", in: access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp")
    }

    /// The directories above `scratch` as they are now, stamped as the
    /// rules stamp their listings.
    static func stamps(above scratch: TemporaryDirectory) -> [DirectoryStamp] {
        var path = scratch.path
        var stamps: [DirectoryStamp] = []
        repeat {
            path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            var info = stat()
            if stat(path.isEmpty ? "/" : path, &info) == 0 { stamps.append(DirectoryStamp(path.isEmpty ? "/" : path, info)) }
        } while !path.isEmpty
        return stamps
    }

    /// None of `stamps` changed since.
    static func unchanged(_ stamps: [DirectoryStamp]) -> Bool {
        stamps.allSatisfy { stamp in
            var info = stat()
            return stat(stamp.path, &info) == 0 && stamp.matches(info)
        }
    }

    /// Where RLIMIT_DATA holds the memory limit, `/dev/zero` is not writable:
    /// rules built for a cgroup that counts all memory are not used without one.
    @Test(.enabled(if: KernelSupport.current.landlockABI != nil, "needs Landlock"))
    func rulesBuiltForACgroupAreNotUsedWithoutOne() throws {
        let scratch = try Self.scratch()
        let temporary = try PrivateTemporaryDirectory.make(in: scratch.path + "/tmp", prefix: "widget")
        var policy = Self.policy(scratch, temporary: temporary)
        policy.memoryLimitMiB = 64
        let prepared = try #require(LandlockRuleset.prepare(policy, memoryByCgroup: true))
        #expect(!Confinement(policy: policy, prepared: prepared).usedPreparedRuleset)
        for round in 1...5 {
            let before = Self.stamps(above: scratch)
            let unlimited = try #require(LandlockRuleset.prepare(policy, memoryByCgroup: false))
            let used = Confinement(policy: policy, prepared: unlimited).usedPreparedRuleset
            guard Self.unchanged(before) else {
                #expect(round < 5, "a directory above the scratch changed in each of 5 rounds")
                continue
            }
            #expect(used)
            break
        }
    }
}
