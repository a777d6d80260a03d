#if canImport(Glibc)
import Glibc
#endif
import TetherGroup
import TetherJSON
import TetherManifest

/// Adds an extension to a Swift package: `Sources/NAME/` with its code and
/// manifest, and an executable target using the TetherExtension SDK and the
/// TetherManifest build plugin. The toolchain's own package editing
/// (`swift package add-target`) finds the package's targets list and adds
/// the target; the target it wrote is then given its dependency and plugin,
/// and `swift package dump-package` must read the result back as intended,
/// or Package.swift and the new files are put back as they were.
package struct Scaffold {
    package let template: ExtensionTemplate
    package let packagePath: String
    /// The identity of the Tether package among the package's dependencies
    /// (the build plugin knows it); nil: found from `dump-package`.
    package var tetherPackage: String?
    package var swift = "swift"

    package init(template: ExtensionTemplate, packagePath: String, tetherPackage: String? = nil) {
        self.template = template
        self.packagePath = Self.absolute(packagePath)
        self.tetherPackage = tetherPackage
    }

    /// `path` resolved (symlinks, `..`): SwiftPM reads a relative scratch
    /// path from the package's directory, and tidies `..` as text where
    /// the kernel follows a symlink first, so both are given this one path.
    /// As given where it cannot be resolved (`run` says why).
    private static func absolute(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Does it; returns what to tell the author.
    package func run() throws(ScaffoldError) -> [String] {
        let name = template.typeName
        guard packagePath.hasPrefix("/") else {
            // Unresolved (`absolute`): the reason, read now (errno from then is gone).
            var info = stat()
            let reason = stat(packagePath, &info) == 0 ? "it cannot be resolved" : String(cString: strerror(errno))
            throw ScaffoldError("cannot find the package directory \(packagePath): \(reason)")
        }
        let manifestFile = packagePath + "/Package.swift"
        let read: [UInt8]?
        do { read = try AtomicFile.read(manifestFile) } catch { throw ScaffoldError("cannot read Package.swift: \(error)") }
        guard let original = read else { throw ScaffoldError("\(packagePath) has no Package.swift") }
        if let specific = Self.versionSpecificManifest(in: packagePath) {
            throw ScaffoldError("the package also has \(specific), which SwiftPM may read instead of Package.swift; nothing was written")
        }
        let sources = packagePath + "/Sources/" + name
        guard access(sources, F_OK) != 0 else { throw ScaffoldError("Sources/\(name) already exists; nothing was written") }
        // Package.swift is replaced by a file made beside it: a directory
        // that cannot take one would fail only after add-target edited it.
        guard access(packagePath, W_OK) == 0 else {
            throw ScaffoldError("cannot write in \(packagePath): \(String(cString: strerror(errno))); nothing was written")
        }

        // Its own scratch path: these commands write nothing there, and the
        // package's (locked by SwiftPM while the plugin runs) is left alone.
        let toolchain = Toolchain(swift: swift, packagePath: packagePath, scratchPath: packagePath + "/.build/tether-new-extension")
        let package = try toolchain.describe()
        guard package.targets[name] == nil else {
            throw ScaffoldError("the package already has a target named \(name); nothing was written")
        }
        let declaration = try targetDeclaration(for: package)

        let mode = Self.mode(of: manifestFile)
        let added = try toolchain.package(["add-target", name, "--type", "executable"])
        // What Package.swift may hold from here on that this run wrote:
        // only those are put back (an edit made meanwhile is not undone).
        var written: [[UInt8]] = []
        guard added.status == .exited(0) else {
            let outcome = restore(manifestFile, original, mode, written, sources)
            throw ScaffoldError("swift package add-target failed (\(Toolchain.firstLine(added.errorText))); \(outcome.sentence(declaration))")
        }
        do throws(ScaffoldError) {
            try complete(manifestFile, declaration: declaration, sources: sources, mode: mode, written: &written)
            let check = try toolchain.describe()
            guard let target = check.targets[name], target["type"]?.stringValue == "executable",
                  case let text = String(decoding: JSONCodec.serialize(target), as: UTF8.self),
                  text.contains("\"TetherExtension\""), text.contains("\"TetherManifestPlugin\"") else {
                throw ScaffoldError("Package.swift did not read back with the target as written")
            }
        } catch {
            let outcome = restore(manifestFile, original, mode, written, sources)
            throw ScaffoldError("\(error.description); \(outcome.sentence(declaration))")
        }
        let manifestName = template.manifestName
        return [
            "Created Sources/\(name)/\(name).swift and Sources/\(name)/\(name).extension.json (\(template.role.rawValue) '\(manifestName)').",
            "Added the executable target \(name) to Package.swift.",
            "Next:",
            "  swift build",
            "  $(swift build --show-bin-path)/\(name) --manifest > \(manifestName).extension.json",
            "  tether host --extension \(manifestName).extension.json      # or start it by hand: \(name) --group DIR",
        ]
    }

    /// The target's full declaration, naming Tether as the package does.
    private func targetDeclaration(for package: PackageDescriptionDump) throws(ScaffoldError) -> TargetDeclaration {
        if package.name == "Tether", package.targets["TetherExtension"] != nil {
            return TargetDeclaration(name: template.typeName, sdk: #""TetherExtension""#, plugin: #".plugin(name: "TetherManifestPlugin")"#)
        }
        let identity: String
        if let tetherPackage {
            guard let named = package.dependencies.first(where: { $0.identity == tetherPackage || $0.name == tetherPackage }) else {
                throw ScaffoldError("the package does not depend on '\(tetherPackage)'; nothing was written")
            }
            identity = named.reference
        } else {
            let candidates = package.dependencies.filter { dependency in
                dependency.identity == "tether" || dependency.urlName?.lowercased() == "tether"
                    || dependency.name?.lowercased() == "tether" || dependency.path.map(Self.isTether) == true
            }
            guard candidates.count == 1, let found = candidates.first else {
                throw ScaffoldError(candidates.isEmpty
                    ? "the package does not depend on Tether; add it first (swift package add-dependency URL --from VERSION, or DIR --type path); nothing was written"
                    : "the package depends on more than one package that looks like Tether; name one with --tether-package IDENTITY")
            }
            identity = found.reference
        }
        return TargetDeclaration(name: template.typeName,
                                 sdk: #".product(name: "TetherExtension", package: "\#(identity)")"#,
                                 plugin: #".plugin(name: "TetherManifestPlugin", package: "\#(identity)")"#)
    }

    /// A local package whose manifest names it Tether.
    private static func isTether(_ path: String) -> Bool {
        guard let bytes = try? AtomicFile.read(path + "/Package.swift") else { return false }
        return String(decoding: bytes, as: UTF8.self).contains(#"name: "Tether""#)
    }

    /// After `add-target`: the target it wrote gets the full declaration,
    /// and the source directory it made gets the extension's files.
    private func complete(_ manifestFile: String, declaration: TargetDeclaration,
                          sources: String, mode: mode_t, written: inout [[UInt8]]) throws(ScaffoldError) {
        guard let bytes = try? AtomicFile.read(manifestFile) else { throw ScaffoldError("Package.swift cannot be read back") }
        written.append(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        guard let edited = declaration.replacingToolchainTarget(in: text) else {
            throw ScaffoldError("swift package add-target wrote the target in a form this version of tether does not know")
        }
        let name = template.typeName
        do {
            written.append(Array(edited.utf8))
            try Self.replace(manifestFile, with: Array(edited.utf8), mode: mode)
            try AtomicFile.write(Array(template.source.utf8), to: "\(sources)/\(name).swift", mode: 0o644)
            try AtomicFile.write(Array(template.manifest.utf8), to: "\(sources)/\(name).extension.json", mode: 0o644)
        } catch {
            throw ScaffoldError("cannot write: \(error)")
        }
    }

    /// Package.swift as it was and the new source directory gone (it did
    /// not exist before, and holds only what add-target and this wrote), if
    /// Package.swift holds what this run wrote (`written`); if it holds
    /// something else (an edit made meanwhile), both are left as they are.
    private func restore(_ manifestFile: String, _ original: [UInt8], _ mode: mode_t,
                         _ written: [[UInt8]], _ sources: String) -> Restoration {
        let current = try? AtomicFile.read(manifestFile)
        if current != original {
            guard let current, written.contains(current) else { return .leftAsIs }
            do {
                try Self.replace(manifestFile, with: original, mode: mode)
            } catch {
                return .notPutBack("\(error)")
            }
        }
        let name = template.typeName
        unlink("\(sources)/\(name).swift")
        unlink("\(sources)/\(name).extension.json")
        rmdir(sources)
        return .putBack(sourcesLeft: access(sources, F_OK) == 0)
    }

    /// Package.swift replaced whole, with `mode` (the umask would narrow
    /// the new file's).
    private static func replace(_ manifestFile: String, with bytes: [UInt8], mode: mode_t) throws {
        try AtomicFile.write(bytes, to: manifestFile, mode: mode)
        chmod(manifestFile, mode)
    }

    /// A `Package@swift-X.swift` beside Package.swift, which SwiftPM may read instead.
    private static func versionSpecificManifest(in directory: String) -> String? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(entry)
            if name.hasPrefix("Package@swift-"), name.hasSuffix(".swift") { return name }
        }
        return nil
    }

    private static func mode(of path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
    }
}
