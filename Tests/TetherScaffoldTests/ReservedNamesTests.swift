import Foundation
import Testing
import TetherTestSupport
@testable import TetherScaffold

/// The modules a new extension's target cannot be named after follow
/// Tether's own package: every target in the graph of the SDK and of the
/// two plugins (and the products it takes from swift-log and swift-system)
/// is in the list, read from `swift package dump-package`.
@Suite(.timed) struct ReservedNamesTests {
    @Test func everyModuleOfTheSDKsAndThePluginsGraphIsReserved() throws {
        let scratch = try TemporaryDirectory("tether-reserved")
        let dump = try runCommand("/usr/bin/env", ["swift", "package", "--package-path", Repository.root,
                                                   "--scratch-path", scratch.path + "/build", "dump-package"],
                                  environment: ["TMPDIR": scratch.path], timeout: 120)
        try #require(dump.status == 0, "\(dump.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let targets = (root["targets"] as? [[String: Any]] ?? []).reduce(into: [String: [String]]()) { all, target in
            guard let name = target["name"] as? String else { return }
            all[name] = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                ((dependency["byName"] ?? dependency["target"] ?? dependency["product"]) as? [Any])?.first as? String
            }
        }
        var graph: Set<String> = [], next = ["TetherExtension", "TetherManifestPlugin", "NewExtension"]
        while let name = next.popLast(), graph.count < 1_000 {
            guard graph.insert(name).inserted else { continue }
            next += targets[name] ?? []
        }
        #expect(graph.count > 10, "\(graph)")
        #expect(graph.subtracting(ReservedNames.modules).isEmpty, "not reserved: \(graph.subtracting(ReservedNames.modules).sorted())")
    }
}
