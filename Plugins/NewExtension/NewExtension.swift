import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory new-extension
/// --role widget|keyboard|notification --name MyWidget`: runs
/// `tether new-extension MyWidget --role widget` on this package, which
/// writes Sources/MyWidget/ (the code and MyWidget.extension.json) and adds
/// an executable target using the TetherExtension SDK and the TetherManifest
/// build plugin to Package.swift, with the toolchain's own package editing.
/// The plugin has no tool of its own to build: an author's `swift build`
/// compiles nothing for it. Without `tether` on PATH it says how to get it.
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

        let command = "tether new-extension \(name) --role \(role)"
        guard let tether = Self.executable(named: "tether") else {
            throw ScaffoldError("""
                this plugin runs the tether command, which is not on PATH: install it (scripts/install.sh in \
                Tether's checkout), or build it there (swift build) and add its .build/debug to PATH; then run \
                \(command) here, or this plugin again
                """)
        }
        var toolArguments = ["new-extension", name, "--role", role, "--package-path", context.package.directoryURL.path]
        // The package's name for Tether, as SwiftPM resolved it (a path
        // dependency is named after its directory).
        if let dependency = context.package.dependencies.first(where: { dependency in
            dependency.package.products.contains { $0.name == "TetherExtension" }
        }) {
            toolArguments += ["--tether-package", dependency.package.id]
        }
        let process = Process()
        process.executableURL = tether
        process.arguments = toolArguments
        process.standardInput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // Its first line, without ArgumentParser's "Error: " and usage.
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").first.map { String($0.hasPrefix("Error: ") ? $0.dropFirst(7) : $0[...]) } ?? ""
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ScaffoldError(said.isEmpty ? "\(command) failed (status \(process.terminationStatus))" : said)
        }
    }

    /// `name` in PATH, as a shell finds it.
    static func executable(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    static let help = """
        OVERVIEW: Scaffold a Tether extension: its code, its manifest, and its target.

        USAGE: swift package --allow-writing-to-package-directory new-extension --role <role> --name <Name>

        OPTIONS:
          --role <role>   widget, keyboard or notification.
          --name <Name>   The Swift type and target name, such as MyWidget; the manifest's
                          name is its kebab-case form (my-widget).

        Runs `tether new-extension <Name> --role <role>` (the tether command must be on PATH),
        which writes Sources/<Name>/<Name>.swift and Sources/<Name>/<Name>.extension.json, and
        adds an executable target that uses the TetherExtension SDK and the TetherManifest build
        plugin (which checks and embeds the manifest at every build) to Package.swift.
        """
}

struct ScaffoldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
