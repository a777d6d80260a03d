import Foundation
import PackagePlugin

/// Checks an extension target's manifest (`NAME.extension.json` in its
/// source directory) at build time and embeds it in the executable, where the SDK finds it.
/// A malformed manifest fails the build with one line naming the file and
/// the field; the host applies the same rules when it loads a manifest.
@main
struct TetherManifestPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SwiftSourceModuleTarget else {
            throw ManifestPluginError("TetherManifestPlugin applies to Swift targets; '\(target.name)' is not one")
        }
        let directory = module.directoryURL
        let manifests = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".extension.json") }
            .sorted()
        guard manifests.count == 1, let manifest = manifests.first else {
            let found = manifests.isEmpty ? "none" : manifests.joined(separator: ", ")
            throw ManifestPluginError(
                "target '\(target.name)' needs exactly one NAME.extension.json in \(directory.path) (found: \(found))")
        }
        let input = directory.appendingPathComponent(manifest)
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedManifest+\(target.name).swift")
        return [
            .buildCommand(
                displayName: "Checking and embedding \(manifest)",
                executable: try context.tool(named: "TetherManifestTool").url,
                arguments: [input.path, output.path],
                inputFiles: [input],
                outputFiles: [output]
            ),
        ]
    }
}

struct ManifestPluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
