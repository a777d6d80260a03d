import Testing
import TetherTestSupport

/// What `import TetherExtension` shows an author, counted from the symbol
/// graph of the built module: every public declaration of the SDK and of
/// every module it re-exports (none now). The goal: at most 120, learned
/// in ten minutes.
@Suite(.timed) struct SDKSurfaceTests {
    static let budget = 120

    @Test func importTetherExtensionShowsAtMost120Declarations() throws {
        let declared = try SymbolGraph.extract("TetherExtension", into: TemporaryDirectory()).declared.map(\.path)
        #expect(declared.count <= Self.budget, "\(declared.count) declarations: \(declared.sorted())")
        // Nothing of the SDK's plumbing: test-only entry points stay internal.
        for hidden in ["ExtensionIdentity.socketPath", "ExtensionIdentity.hostLink",
                       "ExtensionIdentity.resolve(role:arguments:environment:defaultName:)"] {
            #expect(!declared.contains(hidden), "\(hidden) is public")
        }
        // Nothing of TetherAuth's own API, nor swift-log's.
        for foreign in ["TokenBroker", "CredentialStore", "Keyring", "TokenEndpoint", "Logger"] {
            #expect(!declared.contains(foreign), "\(foreign) is visible from import TetherExtension")
        }
    }
}
