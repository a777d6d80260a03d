import Foundation
import Testing
import TetherHost
import TetherJSON
import TetherManifest
import TetherTestSupport

@Suite(.timed) struct ManifestTests {
    func write(_ dir: TemporaryDirectory, _ name: String, _ json: String) throws -> String {
        let path = dir.path + "/" + name
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func script(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.path + "/ext.sh"
        try writeFile(path, "#!/bin/sh\nexit 0\n", mode: 0o755)
        return path
    }

    @Test func loadsAValidManifestResolvingARelativeExecutable() throws {
        let dir = try TemporaryDirectory()
        _ = try script(dir)
        let path = try write(dir, "orders.extension.json", """
            {"name": "orders-widget", "role": "widget", "executable": "ext.sh",
             "arguments": ["--fast"], "restart": "always", "openAccess": true}
            """)
        let manifest = try ExtensionManifest.load(path: path)
        #expect(manifest == ExtensionManifest(name: "orders-widget", role: .widget, executable: dir.path + "/ext.sh",
                                              arguments: ["--fast"], restart: .always, openAccess: true, source: path))
    }

    @Test(arguments: [
        (#"{"role":"widget","executable":"ext.sh"}"#, "\"name\" is missing"),
        (#"{"name":"Bad Name","role":"widget","executable":"ext.sh"}"#, "\"name\" must be"),
        (#"{"name":"a","role":"watch","executable":"ext.sh"}"#, "\"role\" 'watch' is not a role"),
        (#"{"name":"a","role":"widget","executable":"missing.sh"}"#, "\"executable\""),
        (#"{"name":"a","role":"widget","executable":"ext.sh","arguments":"x"}"#, "\"arguments\" must be an array"),
        (#"{"name":"a","role":"widget","executable":"ext.sh","restart":"sometimes"}"#, "\"restart\" must be"),
        (#"{"name":"a","role":"widget","executable":"ext.sh","openAccess":1}"#, "\"openAccess\" must be true or false"),
        (#"{"name":"a","role":"widget","#, "is not valid JSON"),
        (#"[1]"#, "is not a JSON object"),
    ])
    func badManifestsAreRefusedNamingFileAndField(_ json: String, _ expected: String) throws {
        let dir = try TemporaryDirectory()
        _ = try script(dir)
        let path = try write(dir, "x.extension.json", json)
        #expect(throws: ManifestError.self) { try ExtensionManifest.load(path: path) }
        do { _ = try ExtensionManifest.load(path: path) } catch {
            #expect(error.description.hasPrefix(path))
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    @Test func loaderKeepsTheGoodOnesAndReportsTheRest() throws {
        let dir = try TemporaryDirectory()
        _ = try script(dir)
        _ = try write(dir, "a.extension.json", #"{"name":"a","role":"widget","executable":"ext.sh"}"#)
        _ = try write(dir, "b.extension.json", #"{"name":"b","role":"nope","executable":"ext.sh"}"#)
        _ = try write(dir, "c.extension.json", #"{"name":"a","role":"keyboard","executable":"ext.sh"}"#)
        _ = try write(dir, "ignored.json", "garbage")
        let (manifests, errors) = ManifestLoader.load(files: [], directories: [dir.path])
        #expect(manifests.map(\.name) == ["a"])
        #expect(errors.count == 2)
        #expect(errors.contains { $0.file.hasSuffix("b.extension.json") && $0.field == "role" })
        #expect(errors.contains { $0.file.hasSuffix("c.extension.json") && $0.problem.contains("already used") })
    }
}
