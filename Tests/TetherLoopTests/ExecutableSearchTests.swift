import Foundation
import Testing
import TetherLoop
import TetherTestSupport

/// PATH is searched as execvp searches it: a directory or a file that may
/// not be run is passed over for a later match, and a name found only as
/// such a file is `.notExecutable` ("permission denied" to `hold`, as
/// `HoldCommandTests` checks), not `.missing`.
@Suite struct ExecutableSearchTests {
    @Test func directoriesAndUnrunnableFilesArePassedOverAndReported() throws {
        let dir = try TemporaryDirectory()
        let (first, second) = (dir.path + "/first", dir.path + "/second")
        for directory in [first, second, first + "/tool"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try writeFile(second + "/tool", "#!/bin/sh\n", mode: 0o755)
        try writeFile(first + "/data", "not a program\n", mode: 0o644)
        let path = first + ":" + second
        #expect(ExecutableSearch.search("tool", path: path) == .found(second + "/tool"))
        #expect(ExecutableSearch.search("data", path: path) == .notExecutable)
        #expect(ExecutableSearch.search("absent", path: path) == .missing)
    }
}
