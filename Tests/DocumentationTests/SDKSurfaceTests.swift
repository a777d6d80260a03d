import Foundation
import Testing
import TetherTestSupport

/// What `import TetherExtension` shows an author, counted from the symbol
/// graph of the built module: every public declaration of the SDK and of
/// every module it re-exports (it re-exports none now). The issue's goal:
/// at most 120, learned in ten minutes.
@Suite(.timed) struct SDKSurfaceTests {
    static let budget = 120
    #if arch(arm64)
    static let target = "aarch64-unknown-linux-gnu"
    #else
    static let target = "x86_64-unknown-linux-gnu"
    #endif

    @Test func importTetherExtensionShowsAtMost120Declarations() throws {
        let products = URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent()
        let modules = products.appendingPathComponent("Modules").path
        guard FileManager.default.fileExists(atPath: modules + "/TetherExtension.swiftmodule") else {
            Issue.record("no TetherExtension.swiftmodule in \(modules)")
            return
        }
        // The C modules the SDK's graph imports, by their module maps.
        var flags = ["-I", modules]
        let root = products.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for directory in try FileManager.default.contentsOfDirectory(atPath: products.path)
        where directory.hasSuffix(".build") && !directory.hasSuffix("-tool.build") {
            let map = products.path + "/" + directory + "/module.modulemap"
            if FileManager.default.fileExists(atPath: map) { flags += ["-Xcc", "-fmodule-map-file=" + map] }
        }
        for include in ["Sources/CLibUV", "Sources/CSeccomp", ".build/checkouts/swift-system/Sources/CSystem/include"] {
            flags += ["-I", root.appendingPathComponent(include).path]
        }
        // Any module of the build may be re-exported: its symbols are counted then.
        let built = try FileManager.default.contentsOfDirectory(atPath: modules).filter { $0.hasSuffix(".swiftmodule") }
            .map { String($0.dropLast(".swiftmodule".count)) }.filter { $0 != "TetherExtension" }
        flags.append("-experimental-allowed-reexported-modules=" + built.joined(separator: ","))
        let output = try TemporaryDirectory()
        let extract = try runCommand("/usr/bin/env", ["swift-symbolgraph-extract", "-module-name", "TetherExtension",
                                                       "-target", Self.target, "-minimum-access-level", "public",
                                                       "-output-dir", output.path] + flags, timeout: 120)
        let graphs = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasSuffix(".symbols.json") }
        try #require(graphs.contains("TetherExtension.symbols.json"), "swift-symbolgraph-extract: \(extract.stderr)")
        var declared: [String] = []
        // TetherExtension.symbols.json (re-exported modules' symbols in it),
        // and one file per module whose types it extends (Module@Other).
        for graph in graphs {
            let data = try Data(contentsOf: URL(fileURLWithPath: output.path + "/" + graph))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            for symbol in object["symbols"] as? [[String: Any]] ?? [] where symbol["location"] != nil {
                declared.append((symbol["pathComponents"] as? [String] ?? []).joined(separator: "."))
            }
        }
        #expect(declared.count <= Self.budget, "\(declared.count) declarations: \(declared.sorted())")
        // Nothing of the SDK's plumbing: test-only entry points stay internal.
        for hidden in ["ExtensionIdentity.socketPath", "ExtensionIdentity.hostLink", "ExtensionIdentity.resolve(role:arguments:environment:defaultName:)"] {
            #expect(!declared.contains(hidden), "\(hidden) is public")
        }
        // Nothing of TetherAuth's own API, nor swift-log's.
        for foreign in ["TokenBroker", "CredentialStore", "Keyring", "TokenEndpoint", "Logger"] {
            #expect(!declared.contains(foreign), "\(foreign) is visible from import TetherExtension")
        }
    }
}
