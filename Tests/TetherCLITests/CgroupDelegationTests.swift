import Foundation
import Testing
import TetherTestSupport

/// Delegation is found each way it really comes, on its own: systemd's
/// `trusted.delegate` (which only root can read), `user.delegate`
/// (systemd 251+), or, where neither is set or readable, ownership: the
/// cgroup, its `cgroup.procs` and `cgroup.subtree_control` the host's
/// user's while the parent is not (`Delegate=yes` with `User=`). A cgroup
/// the user made inside its own is not a delegation:
/// `aCgroupNotDelegatedIsLeftAlone`, which in the VM tier runs as a user
/// owning both the cgroup and its parent.
extension CgroupTests {
    /// The host took `cgroup`: moved into its `host` leaf, and runs its
    /// widget in a cgroup of its own there.
    func expectTaken(_ cgroup: TestCgroup) throws {
        let fixture = try HostFixture()
        try fixture.addExtension("w", restart: "never", script: Self.escapingScript)
        let host = try startHost(fixture, in: cgroup)
        defer { host.signal(SIGTERM) }
        _ = try host.expectLineStarting("[w] started ", timeout: 15)
        #expect(TestCgroup.cgroup(of: host.pid) == cgroup.path + "/host")
        let own = try sandbox(fixture, "w")["cgroup"] as? String
        #expect(own?.hasPrefix(cgroup.path + "/ext-") == true, "\(own ?? "no cgroup")")
    }

    @Test(.enabled(if: geteuid() == 0, "trusted.* attributes are root's to read (the VM tier runs this as root)"))
    func aTrustedDelegateMarkAloneIsFoundByRoot() throws {
        try expectTaken(TestCgroup(marks: ["trusted.delegate"]))
    }

    @Test func aUserDelegateMarkAloneIsFound() throws {
        try expectTaken(TestCgroup(marks: ["user.delegate"]))
    }

    /// The VM tier's root made the cgroup, chowned it as systemd does, and
    /// set no attribute.
    @Test(.enabled(if: geteuid() != 0 && ProcessInfo.processInfo.environment["TETHER_TEST_OWNED_CGROUP"] != nil,
                   "needs a cgroup chowned to this user by root (the VM tier)"))
    func aCgroupChownedToTheUserIsFound() throws {
        let path = try #require(ProcessInfo.processInfo.environment["TETHER_TEST_OWNED_CGROUP"])
        try expectTaken(TestCgroup(existing: path))
    }
}
