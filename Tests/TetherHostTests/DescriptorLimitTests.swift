import Testing
import TetherSandbox
@testable import TetherHost

/// The host's connection ceiling: what is left of its descriptors once the
/// reserve, the sandbox's listings, features and extensions have theirs.
@Suite struct DescriptorLimitTests {
    @Test func theConfiguredNumberStandsWhereDescriptorsAbound() {
        #expect(DescriptorLimit.connectionCeiling(256, softLimit: 1 << 20, features: 64, extensions: 1_000) == 256)
    }

    @Test func everyExtensionFeatureAndListingComesOffTheTop() {
        let soft = 4_096
        let listings = ReadGrants.descriptorBudget(softLimit: soft)
        #expect(listings > 0 && listings <= soft / 4)
        let none = DescriptorLimit.connectionCeiling(100_000, softLimit: soft, features: 0, extensions: 0)
        #expect(none == soft - DescriptorLimit.reserve - listings)
        let some = DescriptorLimit.connectionCeiling(100_000, softLimit: soft, features: 10, extensions: 100)
        #expect(none - some == 10 + DescriptorLimit.perExtension * 100)
    }

    /// However crowded, at least one client (the user's `tether status`).
    @Test func neverLessThanOneClient() {
        #expect(DescriptorLimit.connectionCeiling(256, softLimit: 1_024, features: 64, extensions: 1_000) == 1)
        #expect(DescriptorLimit.connectionCeiling(0, softLimit: 1_024, features: 0, extensions: 0) == 1)
    }

    @Test func listingsKeepAQuarterOfTheLimitAtMost8192() {
        #expect(ReadGrants.descriptorBudget(softLimit: 1_024) <= 256)
        #expect(ReadGrants.descriptorBudget(softLimit: 1 << 20) == 8_192)
    }
}
