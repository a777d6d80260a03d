#if canImport(Glibc)
import Glibc
#endif
import TetherScaffold

/// The new-extension plugin's tool: `TetherScaffoldTool NAME --role ROLE
/// --package-path DIR [--tether-package ID] [--swift PATH]` runs the
/// scaffolder `tether new-extension` runs, so the plugin needs nothing but
/// the package. SwiftPM builds it only when the plugin runs; it depends on
/// TetherScaffold alone (no ArgumentParser), so that build stays small and
/// an author's `swift build` never compiles it. Exit 0 done, 1 refused
/// or failed (the message says what was left), 2 bad usage; errors are one line on stderr.
@main
enum TetherScaffoldTool {
    static func main() {
        let options: [String: String]
        let name: String
        do {
            (name, options) = try parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            fail(error.description, status: 2)
        }
        guard let role = options["--role"] else { fail("--role is required: widget, keyboard or notification", status: 2) }
        guard let packagePath = options["--package-path"] else { fail("--package-path is required", status: 2) }
        let template: ExtensionTemplate
        do {
            template = try ExtensionTemplate(typeName: name, roleName: role)
        } catch {
            fail(error.description, status: 2)
        }
        var scaffold = Scaffold(template: template, packagePath: packagePath, tetherPackage: options["--tether-package"])
        if let swift = options["--swift"] { scaffold.swift = swift }
        do {
            for line in try scaffold.run() { print(line) }
        } catch {
            fail(error.description, status: 1)
        }
    }

    static let optionNames: Set = ["--role", "--package-path", "--tether-package", "--swift"]

    /// The one name and each option's value (`--option VALUE`; the last of a repeated one wins).
    static func parse(_ arguments: [String]) throws(ScaffoldError) -> (name: String, options: [String: String]) {
        var names: [String] = []
        var options: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("-") {
                guard optionNames.contains(argument) else { throw ScaffoldError("unknown option \(argument)") }
                guard index + 1 < arguments.count else { throw ScaffoldError("\(argument) needs a value") }
                options[argument] = arguments[index + 1]
                index += 2
            } else {
                names.append(argument)
                index += 1
            }
        }
        guard names.count == 1, let name = names.first else {
            throw ScaffoldError("usage: TetherScaffoldTool NAME --role ROLE --package-path DIR [--tether-package ID] [--swift PATH]")
        }
        return (name, options)
    }

    static func fail(_ message: String, status: Int32) -> Never {
        var bytes = Array((message + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { break }
            bytes = bytes.dropFirst(written)
        }
        exit(status)
    }
}
