import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory new-extension
/// --role widget|keyboard|notification --name MyWidget`: writes
/// Sources/MyWidget/ (the code and MyWidget.extension.json) and adds an
/// executable target using the TetherExtension SDK and the TetherManifest
/// build plugin to Package.swift.
@main
struct NewExtension: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        if extractor.extractFlag(named: "help") > 0 || extractor.extractFlag(named: "h") > 0 {
            print(Self.help)
            return
        }
        let roles = extractor.extractOption(named: "role")
        let names = extractor.extractOption(named: "name")
        let leftover = extractor.remainingArguments + extractor.unextractedOptionsOrFlags
        guard leftover.isEmpty else { throw ScaffoldError("unexpected arguments: \(leftover.joined(separator: " ")); see --help") }
        guard let roleText = roles.last, let role = Role(rawValue: roleText) else {
            throw ScaffoldError(roles.isEmpty ? "--role is required: widget, keyboard or notification"
                                              : "'\(roles.last ?? "")' is not a role; use widget, keyboard or notification")
        }
        guard let name = names.last else { throw ScaffoldError("--name is required, such as --name MyWidget") }
        guard Self.isTypeName(name) else {
            throw ScaffoldError("'\(name)' cannot name a Swift type and target; use letters and digits, starting with a letter")
        }
        let package = context.package.directoryURL
        let sources = package.appendingPathComponent("Sources").appendingPathComponent(name)
        guard !FileManager.default.fileExists(atPath: sources.path) else {
            throw ScaffoldError("Sources/\(name) already exists; nothing was written")
        }
        guard !context.package.targets.contains(where: { $0.name == name }) else {
            throw ScaffoldError("the package already has a target named \(name); nothing was written")
        }

        let manifestName = Self.kebabCase(name)
        let manifest = """
            {
              "name": "\(manifestName)",
              "role": "\(role.rawValue)",
              "executable": "\(name)",
              "arguments": [],
              "restart": "on-failure",
              "openAccess": false
            }

            """
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        try Data(role.source(typeName: name).utf8).write(to: sources.appendingPathComponent("\(name).swift"))
        try Data(manifest.utf8).write(to: sources.appendingPathComponent("\(name).extension.json"))
        print("Created Sources/\(name)/\(name).swift and Sources/\(name)/\(name).extension.json (\(role.rawValue) '\(manifestName)').")

        let target = targetDeclaration(name: name, context: context)
        switch try addTarget(target, named: name, to: package.appendingPathComponent("Package.swift"), context: context) {
        case nil:
            print("Added the executable target \(name) to Package.swift.")
        case let reason?:
            let indented = target.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n")
            print("""
                Package.swift was left as it is: \(reason).
                Add this element to the `targets: [...]` list of its `Package(...)` (not a product's):
                \(indented),
                """)
        }
        print("""
            Next:
              swift build
              $(swift build --show-bin-path)/\(name) --manifest > \(manifestName).extension.json
              tether host --extension \(manifestName).extension.json      # or start it by hand: \(name) --group DIR
            """)
    }

    /// The target, depending on Tether as a package dependency, or on its
    /// own targets when run inside Tether itself. Unindented: the editor
    /// indents it like the list it goes into.
    private func targetDeclaration(name: String, context: PluginContext) -> String {
        let tether = context.package.dependencies.first { dependency in
            dependency.package.products.contains { $0.name == "TetherExtension" }
        }
        let sdk = tether.map { #".product(name: "TetherExtension", package: "\#($0.package.id)")"# } ?? #""TetherExtension""#
        let plugin = tether.map { #".plugin(name: "TetherManifestPlugin", package: "\#($0.package.id)")"# }
            ?? #".plugin(name: "TetherManifestPlugin")"#
        return """
            .executableTarget(
                name: "\(name)",
                dependencies: [\(sdk)],
                plugins: [\(plugin)]
            )
            """
    }

    /// Adds `target` to the package's own `targets:` list with
    /// TetherPackageEditor (the Swift parser, not a text search); nil when
    /// done, else why Package.swift was left as it is.
    private func addTarget(_ target: String, named name: String, to packageFile: URL, context: PluginContext) throws -> String? {
        // SwiftPM reads a version-specific manifest before Package.swift.
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: packageFile.deletingLastPathComponent().path)) ?? []
        if let specific = siblings.first(where: { $0.hasPrefix("Package@swift-") && $0.hasSuffix(".swift") }) {
            return "the package also has \(specific), which SwiftPM may read instead"
        }
        let editor = try context.tool(named: "TetherPackageEditor")
        let process = Process()
        process.executableURL = editor.url
        process.arguments = ["add-target", packageFile.path, target]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        switch (process.terminationReason, process.terminationStatus) {
        case (.exit, 0): return nil
        case (.exit, 3) where !said.isEmpty: return said
        default:
            throw ScaffoldError("Sources/\(name) was written, but Package.swift "
                                + "could not be edited (TetherPackageEditor \(process.terminationReason == .exit ? "exited" : "was killed by signal") "
                                + "\(process.terminationStatus)); add the target by hand")
        }
    }

    static func isTypeName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.count <= 64,
              CharacterSet.letters.contains(first), first.isASCII else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && CharacterSet.alphanumerics.contains($0) }
    }

    /// MyWidget → my-widget (the manifest's name: lower case, hyphens).
    static func kebabCase(_ name: String) -> String {
        var result = ""
        let scalars = Array(name.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            let upper = CharacterSet.uppercaseLetters.contains(scalar)
            let previousLower = index > 0 && !CharacterSet.uppercaseLetters.contains(scalars[index - 1])
            let nextLower = index + 1 < scalars.count && CharacterSet.lowercaseLetters.contains(scalars[index + 1])
            if upper, index > 0, previousLower || nextLower { result += "-" }
            result += String(scalar).lowercased()
        }
        return result
    }

    static let help = """
        OVERVIEW: Scaffold a Tether extension: its code, its manifest, and its target.

        USAGE: swift package --allow-writing-to-package-directory new-extension --role <role> --name <Name>

        OPTIONS:
          --role <role>   widget, keyboard or notification.
          --name <Name>   The Swift type and target name, such as MyWidget; the manifest's
                          name is its kebab-case form (my-widget).

        Writes Sources/<Name>/<Name>.swift and Sources/<Name>/<Name>.extension.json, and adds
        an executable target that uses the TetherExtension SDK and the TetherManifest build
        plugin (which checks the manifest at every build) to Package.swift.
        """
}

struct ScaffoldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
