import Foundation
import Testing
import TetherTestSupport

/// The SDK's DocC catalog builds without a warning (every symbol link
/// resolves), and every public symbol of `TetherExtension` has a doc
/// comment. The symbol graph comes from the modules the tests' build made.
@Suite(.timed) struct DocCatalogTests {
    static let binaries = URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent().path

    @Test func theExtensionCatalogBuildsAndEveryPublicSymbolIsDocumented() throws {
        let work = try TemporaryDirectory("tether-docc")
        let graph = try SymbolGraph.extract("TetherExtension", into: work)
        #expect(graph.declared.count > 50)
        let undocumented = graph.declared.filter { !$0.documented }.map(\.path)
        #expect(undocumented.isEmpty, "undocumented: \(undocumented.sorted())")

        let convert = try runCommand("/usr/bin/env", ["docc", "convert",
                                                      Repository.path("Sources/TetherExtension/TetherExtension.docc"),
                                                      "--additional-symbol-graph-dir", graph.directory, "--output-path", work.path + "/out",
                                                      "--fallback-display-name", "TetherExtension",
                                                      "--fallback-bundle-identifier", "tether.TetherExtension",
                                                      "--warnings-as-errors"], timeout: 120)
        #expect(convert.status == 0, "\(convert.stdout)\n\(convert.stderr)")
    }

    /// The C modules TetherExtension's graph reaches, as SwiftPM passes them.
    static func moduleMaps() -> [String] {
        let manager = FileManager.default
        var maps: [String] = []
        func add(_ path: String) { if manager.fileExists(atPath: path) { maps.append(path) } }
        // Not the host tools' copies (`-tool.build`, for plugins' tools):
        // the same modules defined twice stop the extraction.
        for entry in (try? manager.contentsOfDirectory(atPath: binaries)) ?? []
        where entry.hasSuffix(".build") && !entry.hasSuffix("-tool.build") {
            add(binaries + "/" + entry + "/module.modulemap")
        }
        for target in (try? manager.contentsOfDirectory(atPath: Repository.path("Sources"))) ?? [] {
            add(Repository.path("Sources/" + target + "/module.modulemap"))
        }
        let checkouts = Repository.path(".build/checkouts")
        for package in (try? manager.contentsOfDirectory(atPath: checkouts)) ?? [] {
            for target in (try? manager.contentsOfDirectory(atPath: checkouts + "/" + package + "/Sources")) ?? [] {
                add(checkouts + "/" + package + "/Sources/" + target + "/include/module.modulemap")
            }
        }
        return maps.flatMap { ["-Xcc", "-fmodule-map-file=" + $0] }
    }
}
