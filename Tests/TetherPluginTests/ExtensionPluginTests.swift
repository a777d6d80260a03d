import Foundation
import Testing
import TetherTestSupport

/// The SwiftPM plugins as an extension author meets them: a package made by
/// `swift package init --type library` that depends on Tether,
/// `swift package new-extension` for each role,
/// `swift build`, the results running under a real host, and a broken
/// manifest failing the build with the file and the field named; then the
/// same for a widget in `--type executable` and `--type tool` packages.
///
/// Every package builds in one scratch directory: the dependencies compile
/// once, each further layout costs about 2 minutes. The second scaffold
/// already builds most of them (the first extension's build plugin needs
/// TetherHost's whole graph), and under CI's full suite the test has been
/// seen to take 38 minutes: hence the generous limits.
@Suite struct ExtensionPluginTests {
    /// This repository (Tests/TetherPluginTests/ is two levels down).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    @Test(.timeLimit(.minutes(60)))
    func scaffoldedExtensionsBuildRunUnderTheHostAndABrokenManifestFailsTheBuild() throws {
        let scratch = try TemporaryDirectory("tether-plugin")
        let build = scratch.path + "/build"
        // The layout most authors start from (a product whose targets list
        // the old text search took for the package's), then Tether added.
        let package = try consumer(type: "library", name: "Consumer", in: scratch.path)

        // Scaffold one extension of each role.
        for (role, name) in [("widget", "MyWidget"), ("notification", "MyNotifications"), ("keyboard", "MyKeyboard")] {
            try scaffold(role: role, name: name, in: package, scratch: build)
        }
        // Refusals leave everything as it was.
        let again = try swift(["package", "--package-path", package, "--scratch-path", build,
                               "--allow-writing-to-package-directory",
                               "new-extension", "--role", "widget", "--name", "MyWidget"])
        #expect(again.status != 0)
        #expect((again.stdout + again.stderr).contains("Sources/MyWidget already exists; nothing was written"))
        let badRole = try swift(["package", "--package-path", package, "--scratch-path", build,
                                 "--allow-writing-to-package-directory",
                                 "new-extension", "--role", "gadget", "--name", "Other"])
        #expect(badRole.status != 0)
        #expect((badRole.stdout + badRole.stderr).contains("'gadget' is not a role"))
        #expect(!FileManager.default.fileExists(atPath: "\(package)/Sources/Other"))

        let bin = try buildScaffolded(package, scratch: build, timeout: 900)

        // The embedded manifests, with the built executables, run under a host.
        let group = scratch.path + "/group"
        let extensions = scratch.path + "/extensions"
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        for (name, manifestName) in [("MyWidget", "my-widget"), ("MyNotifications", "my-notifications")] {
            let printed = try runCommand("\(bin)/\(name)", ["--manifest"])
            #expect(printed.status == 0, "\(printed.stderr)")
            let manifest = try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [String: Any]
            #expect(manifest?["name"] as? String == manifestName)
            #expect(manifest?["executable"] as? String == "\(bin)/\(name)")
            try writeFile("\(extensions)/\(manifestName).extension.json", printed.stdout)
        }
        let host = try startTether(["host", "--group", group, "--extensions-dir", extensions])
        defer { host.signal(SIGTERM) }
        try expectLines(from: host, containing: ["[my-widget] shows: Hello from my-widget"])
        #expect(try tether(["defaults", "set", "greeting", "\"Howdy\"", "--group", group]).status == 0)
        try expectLine(from: host, containing: "[my-widget] shows: Howdy from my-widget")
        let push = try tether(["push", "--group", group, #"{"title":"Hi"}"#])
        #expect(push.stdout.contains(#"delivered by my-notifications: {"title":"[my-notifications] Hi"}"#), "\(push)")

        // The keyboard, started by hand, attaches and answers.
        let keyboard = try TestProcess("\(bin)/MyKeyboard", ["--group", group])
        try expectLine(from: keyboard, containing: "attached to host pid")
        keyboard.writeStdin("is recording running?\n")
        try expectLine(from: keyboard, containing: "recording is not running")
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit(timeout: 10) == 0)

        // A valid manifest for another role builds, but the executable refuses to run in it.
        let manifestPath = "\(package)/Sources/MyWidget/MyWidget.extension.json"
        let good = try String(contentsOfFile: manifestPath, encoding: .utf8)
        try writeFile(manifestPath, good.replacingOccurrences(of: "\"widget\"", with: "\"keyboard\""))
        #expect(try swift(["build", "--package-path", package, "--scratch-path", build], timeout: 600).status == 0)
        let wrongRole = try runCommand("\(bin)/MyWidget", ["--group", group])
        #expect(wrongRole.status == 2)
        #expect(wrongRole.stderr.contains("built with a manifest for role 'keyboard', but this executable is a widget"),
                "\(wrongRole.stderr)")

        // A broken manifest fails the build, naming the file and the field.
        for (broken, field) in [(good.replacingOccurrences(of: "\"widget\"", with: "\"gadget\""), "\"role\""),
                                (good.replacingOccurrences(of: "\"restart\"", with: "\"restrat\""), "\"restrat\"")] {
            try writeFile(manifestPath, broken)
            let failed = try swift(["build", "--package-path", package, "--scratch-path", build], timeout: 600)
            #expect(failed.status != 0)
            let output = failed.stdout + failed.stderr
            #expect(output.contains("\(manifestPath): error: invalid extension manifest: \(field)"), "\(output)")
        }
        try writeFile(manifestPath, good)
        #expect(try swift(["build", "--package-path", package, "--scratch-path", build], timeout: 600).status == 0)

        // The other two layouts swift package init makes: an executable
        // target alone, and a tool with its own ArgumentParser dependency.
        for (type, name) in [("executable", "Exec"), ("tool", "Tool")] {
            let package = try consumer(type: type, name: name, in: scratch.path)
            try scaffold(role: "widget", name: "\(name)Widget", in: package, scratch: build)
            let bin = try buildScaffolded(package, scratch: build, timeout: 600)
            let printed = try runCommand("\(bin)/\(name)Widget", ["--manifest"])
            #expect(printed.status == 0, "\(printed.stderr)")
            let manifestName = "\(name.lowercased())-widget"
            let manifests = scratch.path + "/\(type)-extensions"
            try FileManager.default.createDirectory(atPath: manifests, withIntermediateDirectories: true)
            try writeFile("\(manifests)/\(manifestName).extension.json", printed.stdout)
            let host = try startTether(["host", "--group", scratch.path + "/\(type)-group", "--extensions-dir", manifests])
            defer { host.signal(SIGTERM) }
            try expectLine(from: host, containing: "[\(manifestName)] shows: Hello from \(manifestName)")
        }
    }

    /// `swift package init --type TYPE` in DIRECTORY/NAME, with Tether added
    /// as a path dependency the way the README says.
    private func consumer(type: String, name: String, in directory: String) throws -> String {
        let package = directory + "/" + name
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        let made = try swift(["package", "--package-path", package, "init", "--type", type, "--name", name])
        try #require(made.status == 0, "\(made.stderr)")
        let added = try swift(["package", "--package-path", package, "add-dependency", Self.repository, "--type", "path"])
        try #require(added.status == 0, "\(added.stderr)")
        return package
    }

    /// The first resolves the whole graph and builds the plugin's tool
    /// (swift-syntax); a later one may build again after the package
    /// changed: minutes each, more while the rest of the suite shares the
    /// two cores (a fresh clone's CI run saw one pass 5 minutes).
    private func scaffold(role: String, name: String, in package: String, scratch: String, timeout: Double = 900) throws {
        let made = try swift(["package", "--package-path", package, "--scratch-path", scratch,
                              "--allow-writing-to-package-directory", "new-extension", "--role", role, "--name", name],
                             timeout: timeout)
        #expect(made.status == 0, "\(made.stdout)\n\(made.stderr)")
        #expect(made.stdout.contains("Added the executable target \(name) to Package.swift"), "\(made.stdout)")
        #expect(FileManager.default.fileExists(atPath: "\(package)/Sources/\(name)/\(name).extension.json"))
    }

    /// Builds with no diagnostics in the scaffolded code; the bin directory.
    private func buildScaffolded(_ package: String, scratch: String, timeout: Double) throws -> String {
        let build = try swift(["build", "--package-path", package, "--scratch-path", scratch], timeout: timeout)
        try #require(build.status == 0, "\(build.stdout)\n\(build.stderr)")
        let output = build.stdout + build.stderr
        #expect(!output.contains(package + "/Sources/"), "no diagnostics in the package's code: \(output)")
        return try swift(["build", "--package-path", package, "--scratch-path", scratch, "--show-bin-path"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `swift`; a build that the toolchain itself crashes in (swift-build's
    /// libdispatch event loop segfaults now and then on Linux,
    /// swiftlang/swift#87033, seen once in this test's CI) runs again, at most
    /// twice: builds are idempotent, and the crash says nothing about Tether.
    private func swift(_ arguments: [String], timeout: Double = 300) throws -> CommandResult {
        var result = try runCommand("swift", arguments, timeout: timeout)
        var retries = 0
        while arguments.first == "build", retries < 2, result.status > 128,
              (result.stdout + result.stderr).contains("*** Program crashed") {
            print("swift-build crashed (status \(result.status)); building again")
            retries += 1
            result = try runCommand("swift", arguments, timeout: timeout)
        }
        return result
    }

    private func expectLine(from process: TestProcess, containing text: String) throws {
        try expectLines(from: process, containing: [text])
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
