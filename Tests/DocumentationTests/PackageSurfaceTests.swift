import Foundation
import Testing
import TetherTestSupport

/// What a user's package sees of Tether besides the SDK (SDKSurfaceTests):
/// the group product for an app, and of every other module only the types
/// the two products' declarations name. Everything else is `package`:
/// counted from the symbol graphs of the built modules.
@Suite(.timed) struct PackageSurfaceTests {
    static let groupBudget = 54

    /// `import TetherGroup`: find the group, probe a liveness lock, read and
    /// write the shared defaults. Documented, as the SDK is.
    @Test func importTetherGroupShowsTheAppsAPIOnly() throws {
        let graph = try SymbolGraph.extract("TetherGroup", into: TemporaryDirectory())
        let declared = graph.declared.map(\.path)
        #expect(declared.count <= Self.groupBudget, "\(declared.count) declarations: \(declared.sorted())")
        for used in ["GroupDirectory.init(path:create:)", "LockProbe.status(identifyHolder:)", "LockTarget.feature(_:)",
                     "SharedStore.defaults(in:)", "SharedStore.value(forKey:)", "LockStatus.holder"] {
            #expect(declared.contains(used), "\(used) is not public")
        }
        // The machinery of the host and the SDK: holding locks, claims,
        // secrets, watchers.
        for hidden in ["LivenessLock", "GroupClaim", "ExclusiveLock", "LockWatcher", "StoreWatcher", "Inotify", "AtomicFile",
                       "SharedStore.credentials(in:)", "GroupDirectory.preparedLockPath(for:)"] {
            #expect(!declared.contains(hidden), "\(hidden) is public")
        }
        let undocumented = graph.declared.filter { !$0.documented }.map(\.path)
        #expect(undocumented.isEmpty, "undocumented: \(undocumented.sorted())")
    }

    /// The modules no product is made of: public only what the products'
    /// own declarations use (a value a defaults read returns, the role and
    /// authentication state the SDK reports). TetherRPC re-exports
    /// TetherJSON, and TetherIPC TetherRPC: their graphs hold its symbols.
    @Test(arguments: [
        ("TetherJSON", ["JSONValue", "JSONNumber"]), ("TetherAuth", ["AuthState"]), ("TetherManifest", ["ExtensionRole"]),
        ("TetherRPC", ["JSONValue", "JSONNumber"]), ("TetherIPC", ["JSONValue", "JSONNumber"]),
        ("TetherLoop", []), ("TetherLog", []), ("TetherHTTP", []), ("TetherBus", []),
        ("TetherSandbox", []), ("TetherHost", []), ("TetherScaffold", []), ("TetherDemo", []),
    ])
    func aModuleOfThePackageShowsOnlyWhatTheProductsUse(module: String, named: [String]) throws {
        let declared = try SymbolGraph.extract(module, into: TemporaryDirectory()).declared.map(\.path)
        let extra = declared.filter { !named.contains(String($0.prefix { $0 != "." })) }
        #expect(extra.isEmpty, "public in \(module) but not named by a product: \(extra.sorted())")
    }

    /// SwiftPM refuses a dependency whose product reaches a target with
    /// unsafe flags (the examples' static runtime has some): no product
    /// reaches one, through its targets, their dependencies, or a plugin's
    /// tool. Read from the manifest as SwiftPM reads it.
    @Test func noProductReachesATargetWithUnsafeFlags() throws {
        // A scratch of its own (the tests' build holds the checkout's), and
        // SwiftPM's lock files in it, not in the machine's temp folder.
        let scratch = try TemporaryDirectory("tether-dump-package")
        let dump = try runCommand("/usr/bin/env", ["swift", "package", "--package-path", Repository.root,
                                                   "--scratch-path", scratch.path + "/build", "dump-package"],
                                  environment: ["TMPDIR": scratch.path], timeout: 120)
        #expect(dump.status == 0, "\(dump.stderr)")
        let package = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any] ?? [:]
        var targets: [String: [String: Any]] = [:]
        for target in package["targets"] as? [[String: Any]] ?? [] {
            if let name = target["name"] as? String { targets[name] = target }
        }
        func unsafe(_ target: [String: Any]) -> Bool {
            (target["settings"] as? [[String: Any]] ?? []).contains { ($0["kind"] as? [String: Any])?["unsafeFlags"] != nil }
        }
        func localDependencies(_ target: [String: Any]) -> [String] {
            (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                ((dependency["byName"] ?? dependency["target"]) as? [Any])?.first as? String
            }
        }
        #expect(targets.values.contains(where: unsafe), "the check would see none: no target has unsafe flags")
        for product in package["products"] as? [[String: Any]] ?? [] {
            var pending = product["targets"] as? [String] ?? []
            var seen = Set<String>()
            while let name = pending.popLast(), seen.count < 1_000 {
                guard seen.insert(name).inserted, let target = targets[name] else { continue }
                #expect(!unsafe(target), "product \(product["name"] ?? "?") reaches \(name), which has unsafe flags")
                pending += localDependencies(target)
            }
            #expect(!seen.isEmpty)
        }
    }

}
