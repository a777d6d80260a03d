import Testing
@testable import TetherGroup

/// A holder's record in its lock file: what a probe believes of it.
@Suite struct HolderInfoTests {
    @Test func aRecordReadsBackAndAValueMayHoldEqualsSigns() {
        let holder = HolderInfo(pid: 42, since: "2026-11-30T03:00:00.000Z", label: "feature a=b")
        #expect(HolderInfo(parsing: holder.serialized) == holder)
        #expect(HolderInfo(parsing: HolderInfo(pid: 7, since: nil, label: nil).serialized) == HolderInfo(pid: 7, since: nil, label: nil))
    }

    /// Empty, torn, foreign or nonsense content names no holder; keys it
    /// does not know are passed over.
    @Test func aTornOrForeignRecordNamesNoHolder() {
        for content in ["", "pid=", "pid=0\n", "pid=-5\n", "pid=12x\n", "since=now\nlabel=x\n", "12345\n", "pid=99999999999\n"] {
            #expect(HolderInfo(parsing: Array(content.utf8)) == nil, "\(content)")
        }
        #expect(HolderInfo(parsing: Array("colour=blue\npid=9\nnoise\n".utf8)) == HolderInfo(pid: 9, since: nil, label: nil))
    }
}
