import Foundation
import Testing
import TetherTestSupport

/// The SDK and the plugins as an extension author meets them: a package
/// made by `swift package init --type executable` that depends on this
/// checkout by path, new extensions scaffolded by `tether new-extension`
/// and by the `new-extension` plugin, built, and run under a real host; and
/// the scaffolder on the other layouts `swift package init` makes.
///
/// The tests share one package and its build (made by the first to need
/// it): Tether's SDK graph compiles once, and each later step costs
/// seconds. SwiftPM keeps one package per scratch directory, so the other
/// layouts are scaffolded (and read back) but not built.
@Suite(.timed, .long, .serialized, .removesScratch) struct ExtensionPluginTests {
    /// Shared by the tests of this suite: packages, their scratch builds, groups.
    static let scratch = try? TemporaryDirectory("tether-plugin")
    static var root: String { scratch?.path ?? "/nonexistent" }
    static var build: String { root + "/build" }
    /// SwiftPM leaves a TemporaryDirectory.* and lock files in the temp
    /// folder at every run: ours is inside the scratch, removed with it.
    static var environment: [String: String] { ["TMPDIR": root + "/tmp"] }
    /// The executable package with LeanWidget scaffolded by `tether
    /// new-extension` and built, once; the output of that first build and
    /// the modules it compiled (before any plugin run builds its tool there).
    static let lean: Result<(package: String, output: String, compiled: [String]), any Error> = Result {
        let package = try consumer(type: "executable", name: "Lean")
        // With standard input closed, as some tools start it: its pipes to
        // `swift package` must not take descriptor 0 (libuv aborts closing it).
        let made = try runCommand("/bin/sh", ["-c", "exec \"$0\" new-extension LeanWidget --role widget --package-path \"$1\" <&-",
                                              tetherExecutable, package], environment: environment, timeout: 120)
        guard made.status == 0, made.stdout.contains("Added the executable target LeanWidget to Package.swift") else {
            throw TestTimeout(what: "tether new-extension LeanWidget: \(made.stdout)\n\(made.stderr)")
        }
        let build = try swift(["build", "--package-path", package, "--scratch-path", Self.build], timeout: 170)
        guard build.status == 0 else { throw TestTimeout(what: "the first build: \(build.stdout)\n\(build.stderr)") }
        // A module is compiled if its NAME.build holds objects: SwiftPM makes
        // the directory (not the objects) of every target it plans, the
        // new-extension plugin's tool and its modules too.
        let compiled = try runCommand("/usr/bin/find", [Self.build, "-type", "f", "-name", "*.o"]).stdout
            .split(separator: "\n").compactMap { $0.split(separator: "/").last { $0.hasSuffix(".build") }.map(String.init) }
        return (package, build.stdout + build.stderr, Array(Set(compiled)).sorted())
    }

    /// `executable --manifest` prints the manifest the plugin embedded: `name`, run from `bin`.
    func expectEmbeddedManifest(in bin: String, executable: String, named name: String) throws {
        let printed = try runCommand("\(bin)/\(executable)", ["--manifest"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let manifest = try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [String: Any]
        #expect(manifest?["name"] as? String == name)
        #expect(manifest?["executable"] as? String == "\(bin)/\(executable)")
        // Onto a full disk: an error, not a success with nothing written.
        let full = try runCommand("/bin/sh", ["-c", #"exec "$0" --manifest > /dev/full"#, "\(bin)/\(executable)"])
        #expect(full.status == 3 && full.stderr.contains("cannot write the manifest to standard output"), "\(full.stderr)")
    }

    /// What the issue asked for: the package uses TetherExtension and the
    /// manifest plugin, resolves and builds none of the heavy packages,
    /// compiles nothing of the host nor of the new-extension plugin's tool,
    /// and `--manifest` prints the embedded manifest with no opt-in line in
    /// the code.
    @Test
    func theSDKAloneBuildsOnlyWhatItUses() throws {
        let (package, output, compiled) = try Self.lean.get()
        #expect(!output.contains(package + "/Sources/"), "no diagnostics in the package's code: \(output)")
        let source = try String(contentsOfFile: "\(package)/Sources/LeanWidget/LeanWidget.swift", encoding: .utf8)
        #expect(!source.contains("EmbeddedManifest") && !source.contains("static let manifest"), "no opt-in line: \(source)")
        let checkouts = (try? FileManager.default.contentsOfDirectory(atPath: Self.build + "/checkouts")) ?? []
        let heavy = ["swift-nio", "async-http-client", "swift-syntax", "hummingbird", "jwt-kit", "swift-crypto",
                     "swift-certificates", "swift-asn1"]
        #expect(checkouts.filter { name in heavy.contains { name.lowercased().hasPrefix($0) } }.isEmpty, "\(checkouts)")
        for module in ["TetherHost.build", "Prometheus.build", "CoreMetrics.build", "NIOCore.build", "tether.build",
                       "ArgumentParser.build", "TetherScaffold.build"] {
            #expect(!compiled.contains(module), "\(module) was built")
        }
        // Nothing of the new-extension plugin's tool, for the target or the
        // host (`-tool`): built for the host are the manifest plugin's tool
        // and its modules alone.
        #expect(!compiled.contains { $0.hasPrefix("TetherScaffold") }, "\(compiled)")
        #expect(compiled.filter { $0.hasSuffix("-tool.build") }
                == ["TetherJSON-tool.build", "TetherManifest-tool.build", "TetherManifestTool-tool.build"], "\(compiled)")
        #expect(compiled.contains("TetherExtension.build"))

        try expectEmbeddedManifest(in: try binPath(package), executable: "LeanWidget", named: "lean-widget")
    }

    /// The plugin (with no tether on PATH: it builds its own tool) adds the
    /// other roles, refuses what it should, and everything runs under a
    /// host; the README's example, copied as it is, prints its manifest.
    @Test
    func thePluginScaffoldsEachRoleAndTheyRunUnderAHost() throws {
        let (package, _, _) = try Self.lean.get()
        for (role, name) in [("notification", "MyNotifications"), ("keyboard", "MyKeyboard")] {
            try scaffoldWithPlugin(role: role, name: name, in: package)
        }
        // Refusals leave everything as it was.
        let before = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        let again = try swiftPackage(package, ["new-extension", "--role", "widget", "--name", "LeanWidget"])
        #expect(again.status != 0)
        #expect((again.stdout + again.stderr).contains("Sources/LeanWidget already exists; nothing was written"))
        let badRole = try swiftPackage(package, ["new-extension", "--role", "gadget", "--name", "Other"])
        #expect(badRole.status != 0)
        #expect((badRole.stdout + badRole.stderr).contains("'gadget' is not a role"))
        #expect(!FileManager.default.fileExists(atPath: "\(package)/Sources/Other"))
        #expect(try String(contentsOfFile: package + "/Package.swift", encoding: .utf8) == before)

        // The README's example, as printed there.
        let (code, manifest) = try Self.readmeExample()
        let made = try tether(["new-extension", "Clock", "--role", "widget", "--package-path", package], timeout: 120)
        #expect(made.status == 0, "\(made.stdout)\n\(made.stderr)")
        try writeFile("\(package)/Sources/Clock/Clock.swift", code)
        try writeFile("\(package)/Sources/Clock/Clock.extension.json", manifest)

        // The README's app, a target of its own on the group product.
        try addReadmeApp(to: package)

        let bin = try buildPackage(package)
        try expectEmbeddedManifest(in: bin, executable: "Clock", named: "clock")

        let group = package + "/group"
        let extensions = package + "/extensions"
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        for (name, manifestName) in [("LeanWidget", "lean-widget"), ("MyNotifications", "my-notifications")] {
            let printed = try runCommand("\(bin)/\(name)", ["--manifest"])
            #expect(printed.status == 0, "\(printed.stderr)")
            try writeFile("\(extensions)/\(manifestName).extension.json", printed.stdout)
        }
        let host = try startTether(["host", "--group", group, "--extensions-dir", extensions])
        defer { host.signal(SIGTERM) }
        try expectLines(from: host, containing: ["[lean-widget] shows: Hello from lean-widget"])
        #expect(try tether(["defaults", "set", "greeting", "\"Howdy\"", "--group", group]).status == 0)
        try expectLines(from: host, containing: ["[lean-widget] shows: Howdy from lean-widget"])
        // The app sees the host and the defaults it was given.
        let app = try runCommand("\(bin)/GroupApp", [], environment: ["TETHER_GROUP": group])
        #expect(app.status == 0, "\(app.stderr)")
        #expect(app.stdout == "the host runs as pid \(host.pid)\ngreeting: Howdy\n", "\(app.stdout)")
        let push = try tether(["push", "--group", group, #"{"title":"Hi"}"#])
        #expect(push.stdout.contains(#"delivered by my-notifications: {"title":"[my-notifications] Hi"}"#), "\(push)")

        // The keyboard, started by hand, attaches and answers.
        let keyboard = try TestProcess("\(bin)/MyKeyboard", ["--group", group])
        try expectLines(from: keyboard, containing: ["attached to host pid"])
        keyboard.writeStdin("is recording running?\n")
        try expectLines(from: keyboard, containing: ["recording is not running"])
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit(timeout: 10) == 0)
    }

    /// The manifest is checked at every build: another role builds but the
    /// executable refuses to run in it; a broken one fails the build naming
    /// the file and the field; the good one builds again.
    @Test
    func aManifestIsCheckedAtEveryBuild() throws {
        let (package, _, _) = try Self.lean.get()
        let manifestPath = "\(package)/Sources/LeanWidget/LeanWidget.extension.json"
        let good = try String(contentsOfFile: manifestPath, encoding: .utf8)
        defer { try? writeFile(manifestPath, good) }
        try writeFile(manifestPath, good.replacingOccurrences(of: "\"widget\"", with: "\"keyboard\""))
        let bin = try buildPackage(package)
        let wrongRole = try runCommand("\(bin)/LeanWidget", ["--group", package + "/wrong-role-group"])
        #expect(wrongRole.status == 2)
        #expect(wrongRole.stderr.contains("built with a manifest for role 'keyboard', but this executable is a widget"),
                "\(wrongRole.stderr)")
        for (broken, field) in [(good.replacingOccurrences(of: "\"widget\"", with: "\"gadget\""), "\"role\""),
                                (good.replacingOccurrences(of: "\"restart\"", with: "\"restrat\""), "\"restrat\"")] {
            try writeFile(manifestPath, broken)
            let failed = try Self.swift(["build", "--package-path", package, "--scratch-path", Self.build], timeout: 150)
            #expect(failed.status != 0)
            let output = failed.stdout + failed.stderr
            #expect(output.contains("\(manifestPath): error: invalid extension manifest: \(field)"), "\(output)")
        }
        try writeFile(manifestPath, good)
        _ = try buildPackage(package)
    }

    /// Every other layout `swift package init` makes takes new extensions
    /// (`--type empty` is left out: the toolchain's own add-dependency
    /// writes a manifest that does not compile there) the same way; each
    /// reads back (the scaffolder checks with dump-package) with its targets
    /// as written. The CLI and the plugin's tool run the same scaffolder
    /// (TetherScaffold), and the plugin hands it the package's directory
    /// and Tether's package name whatever the layout: the plugin runs on
    /// the executable layout (`thePluginScaffoldsEachRoleAndTheyRunUnderAHost`)
    /// only, since each package's first plugin run builds its tool and its
    /// modules (27 s of this test's 30 here, once run on the library layout).
    @Test(arguments: ["library", "tool"])
    func everyInitLayoutTakesANewExtension(_ type: String) throws {
        let package = try Self.consumer(type: type, name: "Layout" + type.capitalized)
        let scratch = Self.root + "/build-\(type)"
        for (name, role) in [("CLIWidget", "widget"), ("CLIKeyboard", "keyboard")] {
            let made = try tether(["new-extension", name, "--role", role, "--package-path", package], timeout: 120)
            #expect(made.status == 0, "\(made.stdout)\n\(made.stderr)")
        }
        let expected: Set = ["CLIWidget", "CLIKeyboard"]
        let dump = try Self.swift(["package", "--package-path", package, "--scratch-path", scratch, "dump-package"])
        let targets = (try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])?["targets"] as? [[String: Any]]
        let names = Set(targets?.compactMap { $0["name"] as? String } ?? [])
        #expect(names.isSuperset(of: expected), "\(names)")
    }

    /// A dependency declared with a name of its own (`.package(name:
    /// "Tether", path: DIR)`, as scripts/consumer-build-time.sh writes it):
    /// SwiftPM takes only that name in a target's dependencies, not the
    /// identity its path gives (the directory's name), so the new target
    /// names it so, and the package still loads.
    @Test func aDependencyDeclaredWithANameIsNamedByIt() throws {
        let package = Self.root + "/NamedDependency"
        try FileManager.default.createDirectory(atPath: package + "/Sources/App", withIntermediateDirectories: true)
        try writeFile(package + "/Package.swift", """
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(
                name: "NamedDependency",
                dependencies: [.package(name: "Tether", path: "\(Repository.root)")],
                targets: [
                    .executableTarget(name: "App"),
                ]
            )

            """)
        try writeFile(package + "/Sources/App/main.swift", "print(1)\n")
        let made = try tether(["new-extension", "Named", "--role", "widget", "--package-path", package], timeout: 120)
        #expect(made.status == 0, "\(made.stdout)\n\(made.stderr)")
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains(#".product(name: "TetherExtension", package: "Tether")"#), "\(manifest)")
        // Named by the identity too, the option finds it and names it the same way.
        let identity = (Repository.root.split(separator: "/").last ?? "").lowercased()
        let again = try tether(["new-extension", "Other", "--role", "widget", "--package-path", package,
                                "--tether-package", identity], timeout: 120)
        #expect(again.status == 0, "\(again.stdout)\n\(again.stderr)")
        // And named by its declared name.
        let byName = try tether(["new-extension", "Third", "--role", "widget", "--package-path", package,
                                 "--tether-package", "Tether"], timeout: 120)
        #expect(byName.status == 0, "\(byName.stdout)\n\(byName.stderr)")
        let after = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        #expect(!after.contains(#"package: "\#(identity)")"#), "\(after)")
        #expect(after.components(separatedBy: #".product(name: "TetherExtension", package: "Tether")"#).count == 4, "\(after)")
    }

    /// The README's Swift extension and its manifest, as printed there (the
    /// first ```swift block after "An extension in twenty lines", and the
    /// ```json block after it).
    static func readmeExample() throws -> (code: String, manifest: String) {
        let blocks = try readmeBlocks(after: "## An extension in twenty lines", ["swift", "json"])
        return (blocks[0], blocks[1])
    }

    /// The code blocks in `languages`' order, each the first after the one
    /// before, in the README's section `heading`.
    static func readmeBlocks(after heading: String, _ languages: [String]) throws -> [String] {
        let readme = try String(contentsOfFile: Repository.path("README.md"), encoding: .utf8)
        guard var index = readme.range(of: heading)?.upperBound else { throw TestTimeout(what: "the README's section '\(heading)'") }
        return try languages.map { language in
            guard let start = readme.range(of: "```\(language)\n", range: index..<readme.endIndex),
                  let end = readme.range(of: "\n```", range: start.upperBound..<readme.endIndex) else {
                throw TestTimeout(what: "a ```\(language) block in the README's section '\(heading)'")
            }
            index = end.upperBound
            return String(readme[start.upperBound..<end.lowerBound]) + "\n"
        }
    }

    /// `swift package init --type TYPE` in a new directory, with Tether added
    /// as a path dependency the way the README says.
    private static func consumer(type: String, name: String) throws -> String {
        let package = root + "/" + name
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        let made = try swift(["package", "--package-path", package, "init", "--type", type, "--name", name])
        guard made.status == 0 else { throw TestTimeout(what: "swift package init: \(made.stderr)") }
        let added = try swift(["package", "--package-path", package, "add-dependency", Repository.root, "--type", "path"])
        guard added.status == 0 else { throw TestTimeout(what: "swift package add-dependency: \(added.stderr)") }
        return package
    }

    /// `GroupApp`: the README's app example, an executable target depending
    /// on the `TetherGroup` product (the package named as the scaffolder
    /// named it for the SDK).
    private func addReadmeApp(to package: String) throws {
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        let named = try #require(manifest.firstMatch(of: /\.product\(name: "TetherExtension", package: "([^"]+)"\)/)?.1)
        let target = try Self.swift(["package", "--package-path", package, "--scratch-path", Self.build,
                                     "add-target", "GroupApp", "--type", "executable"])
        try #require(target.status == 0, "\(target.stdout)\n\(target.stderr)")
        let dependency = try Self.swift(["package", "--package-path", package, "--scratch-path", Self.build,
                                         "add-target-dependency", "TetherGroup", "GroupApp", "--package", String(named)])
        try #require(dependency.status == 0, "\(dependency.stdout)\n\(dependency.stderr)")
        // Top-level code, as printed: in main.swift, in place of the @main the tool wrote.
        try FileManager.default.removeItem(atPath: "\(package)/Sources/GroupApp/GroupApp.swift")
        try writeFile("\(package)/Sources/GroupApp/main.swift",
                      try Self.readmeBlocks(after: "## An app's view of the group", ["swift"])[0])
    }

    /// `swift package` on `package` as an author who has only added the
    /// package runs it: PATH is the toolchain's directory and the system's
    /// (the linker, pkg-config), with no `tether` in any.
    private func swiftPackage(_ package: String, _ arguments: [String]) throws -> CommandResult {
        let path = Self.toolchainPath
        let tether = path.split(separator: ":").map { "\($0)/tether" }.filter { FileManager.default.isExecutableFile(atPath: $0) }
        try #require(tether.isEmpty, "an installed tether on the toolchain's PATH would hide what the plugin needs: \(tether)")
        return try Self.swift(["package", "--package-path", package, "--scratch-path", Self.build,
                               "--allow-writing-to-package-directory"] + arguments, path: path, timeout: 150)
    }

    /// The directory of the `swift` found on PATH, then /usr/bin and /bin.
    static let toolchainPath: String = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let swift = path.split(separator: ":").map(String.init).first { FileManager.default.isExecutableFile(atPath: $0 + "/swift") }
        return ((swift.map { [$0] } ?? []) + ["/usr/bin", "/bin"]).joined(separator: ":")
    }()

    private func scaffoldWithPlugin(role: String, name: String, in package: String) throws {
        let made = try swiftPackage(package, ["new-extension", "--role", role, "--name", name])
        #expect(made.status == 0, "\(made.stdout)\n\(made.stderr)")
        #expect(made.stdout.contains("Added the executable target \(name) to Package.swift"), "\(made.stdout)")
        #expect(FileManager.default.fileExists(atPath: "\(package)/Sources/\(name)/\(name).extension.json"))
    }

    /// Builds with no diagnostics in the scaffolded code; the bin directory.
    private func buildPackage(_ package: String) throws -> String {
        let build = try Self.swift(["build", "--package-path", package, "--scratch-path", Self.build], timeout: 170)
        try #require(build.status == 0, "\(build.stdout)\n\(build.stderr)")
        let output = build.stdout + build.stderr
        #expect(!output.contains(package + "/Sources/"), "no diagnostics in the package's code: \(output)")
        return try binPath(package)
    }

    private func binPath(_ package: String) throws -> String {
        try Self.swift(["build", "--package-path", package, "--scratch-path", Self.build, "--show-bin-path"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `swift`, with `path` as PATH if given; a build that the toolchain
    /// itself crashes in (swift-build's libdispatch event loop segfaults now
    /// and then on Linux, swiftlang/swift#87033, seen once in this test's CI)
    /// runs again, at most twice: builds are idempotent, and the crash says
    /// nothing about Tether. A plugin run builds the plugin's tool first.
    private static func swift(_ arguments: [String], path: String? = nil, timeout: Double = 120) throws -> CommandResult {
        let environment = path.map { Self.environment.merging(["PATH": $0]) { $1 } } ?? Self.environment
        var result = try runCommand("swift", arguments, environment: environment, timeout: timeout)
        var retries = 0
        while arguments.first == "build" || arguments.contains("new-extension"), retries < 2, result.status > 128,
              (result.stdout + result.stderr).contains("*** Program crashed") {
            print("swift-build crashed (status \(result.status)); building again")
            retries += 1
            result = try runCommand("swift", arguments, environment: environment, timeout: timeout)
        }
        return result
    }

    /// Reads lines until each of `texts` has appeared in one, in any order.
    private func expectLines(from process: TestProcess, containing texts: [String]) throws {
        var missing = texts
        var seen: [String] = []
        while !missing.isEmpty, let line = try process.readLine(timeout: 30) {
            missing.removeAll { line.contains($0) }
            seen.append(line)
        }
        if !missing.isEmpty { throw TestTimeout(what: "lines containing \(missing) (saw \(seen))") }
    }
}

/// Removes the suite's shared scratch (packages, builds, SwiftPM's temp
/// files) once its last test has run: a static is never deinitialized.
struct RemovesScratch: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        defer { try? FileManager.default.removeItem(atPath: ExtensionPluginTests.root) }
        try FileManager.default.createDirectory(atPath: ExtensionPluginTests.root + "/tmp", withIntermediateDirectories: true)
        try await function()
    }
}

extension Trait where Self == RemovesScratch {
    static var removesScratch: Self { RemovesScratch() }
}
