import Testing
import TetherSandbox
@testable import TetherHost

/// The host's descriptor budget: what is left once the reserve, the
/// sandbox's listings and features have theirs goes to clients and to the
/// extensions that run; manifests that never run cost nothing.
@Suite struct DescriptorLimitTests {
    @Test func theConfiguredNumberStandsWhereDescriptorsAbound() {
        let budget = DescriptorLimit.budget(connections: 256, softLimit: 1 << 20, features: 64, manifests: 1_000)
        #expect(budget.clients == 256)
        #expect(budget.runningExtensions >= 1_000)
    }

    @Test func everyFeatureAndListingComesOffTheTop() {
        let soft = 4_096
        let listings = ReadGrants.descriptorBudget(softLimit: soft)
        #expect(listings > 0 && listings <= soft / 4)
        let none = DescriptorLimit.budget(connections: 100_000, softLimit: soft, features: 0, manifests: 0)
        #expect(none.clients == soft - DescriptorLimit.reserve - listings)
        let some = DescriptorLimit.budget(connections: 256, softLimit: soft, features: 10, manifests: 0)
        #expect(some.clients == 256)
        #expect(some.runningExtensions == (soft - DescriptorLimit.reserve - listings - 10 - 256) / DescriptorLimit.perExtension)
    }

    /// Issue 58: 3,000 idle manifests under a limit of 20,000 left one
    /// client, and clients evicted one another.
    @Test func manifestsThatDoNotRunLeaveClientsTheirFloor() {
        let soft = 20_000
        let budget = DescriptorLimit.budget(connections: 256, softLimit: soft, features: 256, manifests: 3_000)
        #expect(budget.clients == DescriptorLimit.clientFloor)
        let available = soft - DescriptorLimit.reserve - ReadGrants.descriptorBudget(softLimit: soft) - 256
        #expect(budget.runningExtensions == (available - budget.clients) / DescriptorLimit.perExtension)
        // Fewer manifests than room: every one may run beside the configured clients.
        let roomy = DescriptorLimit.budget(connections: 256, softLimit: soft, features: 256, manifests: 100)
        #expect(roomy.clients == 256 && roomy.runningExtensions >= 100)
    }

    /// However crowded, at least one client (the user's `tether status`),
    /// and no negative room.
    @Test func neverLessThanOneClientNorNegativeRoom() {
        #expect(DescriptorLimit.budget(connections: 0, softLimit: 1_024, features: 0, manifests: 0).clients == 1)
        let starved = DescriptorLimit.budget(connections: 256, softLimit: 64, features: 256, manifests: 10)
        #expect(starved.clients == 1 && starved.runningExtensions == 0)
        // Where the floor would take it all, one extension still runs.
        let tight = DescriptorLimit.budget(connections: 256, softLimit: 512, features: 256, manifests: 3)
        #expect(tight.runningExtensions >= 1 && tight.clients >= 1, "\(tight)")
    }

    @Test func listingsKeepAQuarterOfTheLimitAtMost8192() {
        #expect(ReadGrants.descriptorBudget(softLimit: 1_024) <= 256)
        #expect(ReadGrants.descriptorBudget(softLimit: 1 << 20) == 8_192)
    }

    /// Where launches have worlds of their own, read grants list little:
    /// 3,000 extensions run under the limit of 20,000 beside 256 clients.
    @Test func inWorldsListingsKeepFewAndThreeThousandRun() {
        #expect(ReadGrants.descriptorBudget(softLimit: 20_000, few: true) == 256)
        let budget = DescriptorLimit.budget(connections: 256, softLimit: 20_000, features: 256, manifests: 3_000, worlds: true)
        #expect(budget.clients == 256 && budget.runningExtensions >= 3_000, "\(budget)")
    }
}
