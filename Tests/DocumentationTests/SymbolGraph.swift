import Foundation
import TetherTestSupport

/// A module's public symbol graph, extracted from the modules the tests'
/// build made, with the C modules its graph imports.
struct SymbolGraph {
    /// Each symbol: its path (`Type.member`) and whether the source has a
    /// doc comment. Those the compiler made (no source location) are left out.
    let declared: [(path: String, documented: Bool)]
    /// Where the graph files are, for `docc convert`.
    let directory: String

    /// Symbols of any module of the build that `module` re-exports count
    /// as its own (`-experimental-allowed-reexported-modules`).
    static func extract(_ module: String, into work: TemporaryDirectory) throws -> SymbolGraph {
        let binaries = DocCatalogTests.binaries
        let directory = work.path + "/symbols"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let built = try FileManager.default.contentsOfDirectory(atPath: binaries + "/Modules")
            .filter { $0.hasSuffix(".swiftmodule") }.map { String($0.dropLast(".swiftmodule".count)) }.filter { $0 != module }
        let extract = try runCommand("/usr/bin/env", ["swift", "symbolgraph-extract", "-module-name", module,
                                                      "-I", binaries + "/Modules", "-output-dir", directory,
                                                      "-minimum-access-level", "public",
                                                      "-experimental-allowed-reexported-modules=" + built.joined(separator: ",")]
                                                      + DocCatalogTests.moduleMaps(), timeout: 120)
        guard extract.status == 0 else { throw SymbolGraphError(stderr: extract.stderr) }
        var declared: [(String, Bool)] = []
        // The module's file (re-exported symbols in it), and one per module
        // whose types it extends (Module@Other.symbols.json).
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasSuffix(".symbols.json") {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            for symbol in object?["symbols"] as? [[String: Any]] ?? [] where symbol["location"] != nil {
                declared.append(((symbol["pathComponents"] as? [String] ?? []).joined(separator: "."), symbol["docComment"] != nil))
            }
        }
        return SymbolGraph(declared: declared, directory: directory)
    }
}

struct SymbolGraphError: Error, CustomStringConvertible {
    let stderr: String
    var description: String { "swift symbolgraph-extract failed: \(stderr)" }
}
