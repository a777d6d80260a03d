import Logging
import Testing
import TetherGroup
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// The group's size is a sum of what each part holds, saturating: a sparse
/// file that claims nearly all of `Int64` (any process of the user can
/// make one on tmpfs, btrfs or XFS) makes the group full, never a trap.
@Suite struct GroupSizeSumTests {
    @Test func partsAddUpWithoutOverflow() throws {
        let scratch = try TemporaryDirectory("tether-group-size")
        let host = Host(loop: try EventLoop(), configuration: .init(group: try GroupDirectory(path: scratch.path + "/group"),
                                                                    manifests: [], logger: Logger(label: "test")))
        host.groupSizes = ["shared": (Int64.max, false), "stores": (Int64.max, false)]
        #expect(host.isGroupFull)
        host.groupSizes = ["shared": (1 << 20, false), "stores": (0, false)]
        #expect(!host.isGroupFull)
        host.groupSizes = ["shared": (0, true)]
        #expect(host.isGroupFull, "a part with more entries than counted is full")
    }
}
