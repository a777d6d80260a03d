import Foundation
import Testing
import TetherTestSupport

/// The binaries on the start-up path link neither Foundation's full library
/// nor its networking (libcurl and its dependency tree).
@Suite(.timed) struct StartupLinkageTests {
    @Test func tetherAndTheExamplesLinkNoFoundationNorCurl() throws {
        for binary in [tetherExecutable, exampleExecutable("example-widget"), exampleExecutable("example-keyboard"),
                       exampleExecutable("example-notification")] {
            let result = try runCommand("/usr/bin/ldd", [binary])
            let libraries = result.stdout.split(separator: "\n").compactMap {
                $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
            }
            #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed \(binary)'s libraries: \(libraries)")
            for forbidden in ["libFoundation.so", "libFoundationNetworking.so", "libcurl", "libFoundationInternationalization.so",
                              "lib_FoundationICU.so"] {
                #expect(!libraries.contains { $0.hasPrefix(forbidden) }, "\(binary) links \(forbidden): \(libraries)")
            }
        }
    }
}
