#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherGroup
import TetherTestSupport

/// A host's claim on the group directory itself, by the kernel's `flock`:
/// in-process, since a lock on another open of the directory conflicts
/// even within one process, as another host's would.
@Suite struct GroupClaimTests {
    /// Claimed once; a second claim names the holder (this process, by the
    /// kernel's lock table) until the first is let go.
    @Test func aClaimedGroupIsRefusedNamingItsHolder() throws {
        let dir = try TemporaryDirectory("tether-claim")
        _ = try GroupDirectory(path: dir.group)
        try {
            guard case .claimed(let claim) = try GroupClaim.claim(dir.group) else {
                Issue.record("a free group was not claimed")
                return
            }
            try withExtendedLifetime(claim) {
                guard case .claimedByHost(let pid) = try GroupClaim.claim(dir.group) else {
                    Issue.record("a claimed group was claimed again")
                    return
                }
                #expect(pid == getpid())
                #expect(GroupClaim.holder(of: dir.group) == getpid())
            }
        }()
        // The first claim let go (its descriptor closed with it).
        guard case .claimed = try GroupClaim.claim(dir.group) else {
            Issue.record("a group let go was not claimed")
            return
        }
    }

    /// Only a shared lock in the way (no host's: a host's is exclusive):
    /// said as such, with who holds it, so the host starts without the claim.
    @Test func aSharedLockIsNoHostsClaim() throws {
        let dir = try TemporaryDirectory("tether-claim")
        _ = try GroupDirectory(path: dir.group)
        let reader = open(dir.group, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(reader >= 0 && flock(reader, LOCK_SH | LOCK_NB) == 0)
        defer { close(reader) }
        guard case .readLocked(let holders) = try GroupClaim.claim(dir.group) else {
            Issue.record("a shared lock was taken for a host's claim")
            return
        }
        #expect(holders == [getpid()])
    }

    /// A group path that is a symlink is never claimed through.
    @Test func aSymlinkedGroupIsRefused() throws {
        let dir = try TemporaryDirectory("tether-claim")
        _ = try GroupDirectory(path: dir.group)
        #expect(symlink(dir.group, dir.path + "/link") == 0)
        #expect(throws: GroupError.self) { _ = try GroupClaim.claim(dir.path + "/link") }
    }
}
