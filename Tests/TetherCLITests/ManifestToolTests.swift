import Testing
import TetherTestSupport

/// What the manifest plugin's tool writes into an author's target compiles
/// in any package: one at an older tools version, or a target without
/// package access, compiles with no `-package-name`, so the source may
/// declare nothing `package`.
@Suite(.timed) struct ManifestToolTests {
    @Test func theEmbeddedSourceCompilesWithoutAPackageName() throws {
        let work = try TemporaryDirectory("tether-manifest-tool")
        try writeFile(work.path + "/clock.extension.json", #"{"name": "clock", "role": "widget", "executable": "Clock"}"#)
        let written = try runCommand(exampleExecutable("TetherManifestTool"),
                                     [work.path + "/clock.extension.json", work.path + "/Embedded.swift"])
        #expect(written.status == 0, "\(written.stderr)")
        // Type-checked as a library's file, as the plugin's output is.
        let checked = try runCommand("/usr/bin/env", ["swiftc", "-typecheck", "-parse-as-library", "-module-name", "Clock",
                                                      work.path + "/Embedded.swift"], timeout: 120)
        #expect(checked.status == 0, "\(checked.stderr)")
    }
}
