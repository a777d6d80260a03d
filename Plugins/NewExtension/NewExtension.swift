import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory new-extension
/// --role widget|keyboard|notification --name MyWidget` writes
/// Sources/MyWidget/ (the code and MyWidget.extension.json) and adds an
/// executable target using the TetherExtension SDK and the TetherManifest
/// build plugin to Package.swift, with the toolchain's own package editing.
/// It runs TetherScaffoldTool, this package's own small tool (the scaffolder
/// `tether new-extension` runs), which SwiftPM builds when the plugin runs:
/// nothing needs to be installed, and an author's `swift build` compiles
/// nothing for it.
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
        guard let role = roles.last else { throw ScaffoldError("--role is required: widget, keyboard or notification") }
        guard let name = names.last else { throw ScaffoldError("--name is required, such as --name MyWidget") }

        var toolArguments = [name, "--role", role, "--package-path", context.package.directoryURL.path]
        // The package's name for Tether, as SwiftPM resolved it (a path
        // dependency is named after its directory).
        if let dependency = context.package.dependencies.first(where: { dependency in
            dependency.package.products.contains { $0.name == "TetherExtension" }
        }) {
            toolArguments += ["--tether-package", dependency.package.id]
        }
        // The toolchain running this plugin edits the package, whatever PATH says.
        if let swift = try? context.tool(named: "swift") {
            toolArguments += ["--swift", swift.url.path]
        }
        let process = Process()
        process.executableURL = try context.tool(named: "TetherScaffoldTool").url
        process.arguments = toolArguments
        process.standardInput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // The tool says why in one line.
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").first.map(String.init) ?? ""
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ScaffoldError(said.isEmpty ? "the scaffolder failed (status \(process.terminationStatus))" : said)
        }
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
        plugin (which checks and embeds the manifest at every build) to Package.swift. It needs
        nothing installed: SwiftPM builds the plugin's small tool (the scaffolder of
        `tether new-extension`) the first time it runs.
        """
}

struct ScaffoldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
