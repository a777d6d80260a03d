import Foundation
import Testing
import TetherTestSupport

/// `TetherPackageEditor add-target`, what new-extension runs on Package.swift,
/// on the layouts authors have: each result is read back by SwiftPM itself
/// (`swift package dump-package`), and where the list cannot be found with
/// certainty the file is left byte for byte as it was.
@Suite struct PackageEditorTests {
    static let editor = exampleExecutable("TetherPackageEditor")
    /// What new-extension adds, less the references to Tether (SwiftPM
    /// checks them, and these packages do not depend on it; the real
    /// element, Tether included, is ExtensionPluginTests' and
    /// `tethersOwnPackage`'s).
    static let element = """
        .executableTarget(
            name: "MyWidget",
            dependencies: [],
            plugins: []
        )
        """
    static let elementInTether = """
        .executableTarget(
            name: "MyWidget",
            dependencies: ["TetherExtension"],
            plugins: [.plugin(name: "TetherManifestPlugin")]
        )
        """

    /// A package directory with `manifest` as its Package.swift, or one made
    /// by `swift package init --type TYPE`.
    func package(_ manifest: String? = nil, initType: String? = nil) throws -> (TemporaryDirectory, String) {
        let dir = try TemporaryDirectory("tether-editor")
        let path = dir.path + "/Pkg"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if let initType {
            let made = try runCommand("swift", ["package", "--package-path", path, "init", "--type", initType, "--name", "Pkg"],
                                      timeout: 120)
            try #require(made.status == 0, "\(made.stderr)")
        } else if let manifest {
            try writeFile(path + "/Package.swift", manifest)
        }
        return (dir, path)
    }

    /// Targets (name, type) as SwiftPM reads the manifest.
    func targets(_ path: String) throws -> [String: String] {
        let dumped = try runCommand("swift", ["package", "--package-path", path, "dump-package"], timeout: 120)
        try #require(dumped.status == 0, "\(dumped.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any]
        var result: [String: String] = [:]
        for target in object?["targets"] as? [[String: Any]] ?? [] {
            if let name = target["name"] as? String { result[name] = target["type"] as? String }
        }
        return result
    }

    func products(_ path: String) throws -> [String: [String]] {
        let dumped = try runCommand("swift", ["package", "--package-path", path, "dump-package"], timeout: 120)
        let object = try JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any]
        var result: [String: [String]] = [:]
        for product in object?["products"] as? [[String: Any]] ?? [] {
            if let name = product["name"] as? String { result[name] = product["targets"] as? [String] }
        }
        return result
    }

    func add(_ path: String, _ element: String = element) throws -> CommandResult {
        try runCommand(Self.editor, ["add-target", path + "/Package.swift", element])
    }

    /// Adds the element; SwiftPM then reads the same targets plus MyWidget.
    func expectMyWidgetAdded(_ path: String, _ element: String = element) throws {
        let before = try targets(path)
        let result = try add(path, element)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        var expected = before
        expected["MyWidget"] = "executable"
        #expect(try targets(path) == expected)
    }

    @Test(arguments: ["library", "executable", "tool"])
    func theLayoutsSwiftPackageInitMakes(_ type: String) throws {
        let (dir, path) = try package(initType: type)
        _ = dir
        let productsBefore = try products(path)
        try expectMyWidgetAdded(path)
        #expect(try products(path) == productsBefore, "no product was touched")
        let text = try String(contentsOfFile: path + "/Package.swift", encoding: .utf8)
        // Indented like its neighbours (init uses four spaces per level).
        #expect(text.contains("\n        .executableTarget(\n            name: \"MyWidget\","), "\(text)")
    }

    @Test(arguments: [
        // Several products on one line, targets inline.
        """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(name: "Pkg", products: [.library(name: "A", targets: ["A"]), .executable(name: "b", targets: ["B"])], targets: [.target(name: "A"), .executableTarget(name: "B")])
        """,
        // One per line, `]` after the last one, a comment after it, decoys.
        """
        // swift-tools-version:6.0
        import PackageDescription
        // targets: [ in a comment is not the list
        let decoy = "targets: [ in a string is not it either"
        let package = Package(
            name: "Pkg",
            products: [
                .library(name: "A", targets: ["A"]),
            ],
            targets: [
                .target(name: "A"),
                .target(name: "B", dependencies: ["A"])  // no trailing comma
            ]
        )
        """,
        // An empty list, tabs.
        "// swift-tools-version:6.0\nimport PackageDescription\nlet package = PackageDescription.Package(\n\tname: \"Pkg\",\n\ttargets: []\n)\n",
    ])
    func handWrittenLayouts(_ manifest: String) throws {
        let (dir, path) = try package(manifest)
        _ = dir
        try expectMyWidgetAdded(path)
    }

    /// Tether's own manifest (the scaffolder run inside this repository).
    @Test func tethersOwnPackage() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let (dir, path) = try package(try String(contentsOfFile: repository + "/Package.swift", encoding: .utf8))
        _ = dir
        try expectMyWidgetAdded(path, Self.elementInTether)
    }

    @Test(arguments: [
        ("let all: [Target] = [.target(name: \"A\")]\nlet package = Package(name: \"Pkg\", targets: all)",
         "its `targets:` is not a list written out (`all`)"),
        ("let package = Package(name: \"Pkg\", targets: [.target(name: \"A\")] + [])",
         "its `targets:` is not a list written out"),
        ("let package = Package(name: \"Pkg\")", "its `Package(...)` has no `targets:` argument"),
        ("let package = Package(name: \"Pkg\", targets: [])\nlet other = Package(name: \"Q\", targets: [])",
         "it has more than one top-level `Package(...)`"),
        ("let package = Package(name: \"Pkg\", targets: [.target(name: \"A\")", "Package.swift does not parse"),
        ("let made = makePackage()", "it has no top-level `let package = Package(...)`"),
    ])
    func uncertainListsAreLeftAsTheyAre(_ body: String, _ reason: String) throws {
        let manifest = "// swift-tools-version:6.0\nimport PackageDescription\n" + body + "\n"
        let (dir, path) = try package(manifest)
        _ = dir
        let result = try add(path)
        #expect(result.status == 3, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix(reason), "\(result.stdout)")
        #expect(try String(contentsOfFile: path + "/Package.swift", encoding: .utf8) == manifest)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["Package.swift"], "no temporary file left")
    }

    /// CRLF stays CRLF; a symlinked or non-UTF-8 Package.swift is left alone.
    @Test func lineEndingsLinksAndEncodings() throws {
        let crlf = "// swift-tools-version:6.0\r\nimport PackageDescription\r\nlet package = Package(\r\n    name: \"Pkg\",\r\n    targets: [\r\n        .target(name: \"A\"),\r\n    ]\r\n)\r\n"
        let (dir, path) = try package(crlf)
        _ = dir
        #expect(try add(path).status == 0)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path + "/Package.swift")))
        let bare = bytes.indices.filter { bytes[$0] == 0x0a && ($0 == 0 || bytes[$0 - 1] != 0x0d) }
        #expect(bare.isEmpty, "every line ends in CRLF")
        #expect(try targets(path)["MyWidget"] == "executable")

        let (linkDir, linked) = try package()
        _ = linkDir
        let real = linked + "/Real.swift"
        let manifest = "// swift-tools-version:6.0\nimport PackageDescription\nlet package = Package(name: \"Pkg\", targets: [])\n"
        try writeFile(real, manifest)
        try FileManager.default.createSymbolicLink(atPath: linked + "/Package.swift", withDestinationPath: real)
        let refused = try add(linked)
        #expect(refused.status == 3 && refused.stdout.hasPrefix("Package.swift is a symbolic link"), "\(refused)")
        #expect(try String(contentsOfFile: real, encoding: .utf8) == manifest)

        let (latinDir, latin) = try package()
        _ = latinDir
        var latinBytes = Array(manifest.utf8)
        latinBytes.insert(contentsOf: [0x2f, 0x2f, 0x20, 0xe9, 0x0a], at: 0)  // "// é" in Latin-1
        try Data(latinBytes).write(to: URL(fileURLWithPath: latin + "/Package.swift"))
        let notUTF8 = try add(latin)
        #expect(notUTF8.status == 3 && notUTF8.stdout.hasPrefix("Package.swift is not UTF-8"), "\(notUTF8)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: latin + "/Package.swift"))) == latinBytes)
    }
}
