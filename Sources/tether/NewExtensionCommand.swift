import ArgumentParser
import TetherScaffold

struct NewExtension: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new-extension",
        abstract: "Add an extension to a Swift package: its code, its manifest, and its target.",
        discussion: """
            Writes Sources/NAME/NAME.swift and Sources/NAME/NAME.extension.json, and adds an \
            executable target that uses the TetherExtension SDK and the TetherManifest build plugin \
            (which checks and embeds the manifest at every build). The package must depend on Tether. \
            Package.swift is edited by the toolchain's own `swift package add-target`, then read back \
            with `swift package dump-package`; if it does not read back as intended, it is put back \
            as it was (unless another program changed it meanwhile: then it is left, and the error \
            says so). Inside a package, `swift package new-extension --role ROLE --name NAME` does \
            the same.
            Example: tether new-extension MyWidget --role widget
            """)

    @Argument(help: ArgumentHelp("The Swift type and target name, such as MyWidget; the manifest's name is its kebab-case form (my-widget).",
                                 valueName: "NAME"))
    var name: String
    @Option(help: ArgumentHelp("widget, keyboard or notification.", valueName: "ROLE")) var role: String
    @Option(help: ArgumentHelp("The package's directory (default: the current one).", valueName: "DIR"))
    var packagePath = "."
    @Option(help: ArgumentHelp("Tether's identity (or the name its declaration gives it) among the package's dependencies, where it cannot be told.", valueName: "ID"))
    var tetherPackage: String?

    func validate() throws {
        do {
            _ = try ExtensionTemplate(typeName: name, roleName: role)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        // The same scaffolder as the new-extension plugin's tool (TetherScaffoldTool).
        let template: ExtensionTemplate
        do {
            template = try ExtensionTemplate(typeName: name, roleName: role)
        } catch {
            throw CLIError.badInput(error.description)
        }
        let scaffold = Scaffold(template: template, packagePath: packagePath, tetherPackage: tetherPackage)
        do {
            for line in try scaffold.run() { output(line) }
        } catch {
            throw CLIError.refused(error.description)
        }
    }
}
