import Foundation
import Testing
import TetherTestSupport

/// The binaries on the start-up path link neither Foundation's full library
/// nor its networking (libcurl and its dependency tree; for the examples,
/// which carry the runtime, a link pulling them in would need libraries
/// their build does not name), and the example extensions carry the Swift
/// runtime in themselves: a host runs thousands of them, and each process
/// mapping the runtime's shared libraries pays for it at its start and its
/// exit (issue 58's stop of 3,000).
@Suite(.timed) struct StartupLinkageTests {
    @Test func tetherAndTheExamplesLinkNoFoundationNorCurl() throws {
        for binary in [tetherExecutable] + Self.examples {
            let libraries = try Self.sharedLibraries(of: binary)
            #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed \(binary)'s libraries: \(libraries)")
            for forbidden in ["libFoundation.so", "libFoundationNetworking.so", "libcurl", "libFoundationInternationalization.so",
                              "lib_FoundationICU.so"] {
                #expect(!libraries.contains { $0.hasPrefix(forbidden) }, "\(binary) links \(forbidden): \(libraries)")
            }
        }
    }

    @Test func theExampleExtensionsCarryTheSwiftRuntime() throws {
        for binary in Self.examples {
            let libraries = try Self.sharedLibraries(of: binary)
            #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed \(binary)'s libraries: \(libraries)")
            // Its C++ runtime too (examples/link).
            let runtime = libraries.filter { library in
                ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime", "libstdc++"]
                    .contains { library.hasPrefix($0) }
            }
            #expect(runtime.isEmpty, "\(binary) maps the Swift runtime's shared libraries: \(runtime)")
        }
    }

    /// Where this glibc reads packed relative relocations (2.36), the
    /// examples' are packed: 40,000 entries the loader reads at each start.
    /// (The manifest reads the version the same way; TETHER_PACKED_RELOCATIONS
    /// overrides it.)
    @Test func theExampleExtensionsPackTheirRelocationsWhereGlibcReadsThem() throws {
        var text = [CChar](repeating: 0, count: 64)
        let length = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
        let version = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
        try #require(length > 0 && version.count >= 2, "confstr: \(version)")
        let packed = switch ProcessInfo.processInfo.environment["TETHER_PACKED_RELOCATIONS"] {
        case "0": false
        case "1": true
        default: (version[0], version[1]) >= (2, 36)
        }
        for binary in Self.examples {
            let dynamic = try runCommand("/usr/bin/readelf", ["--dynamic", binary])
            #expect(dynamic.status == 0, "\(dynamic.stderr)")
            #expect(dynamic.stdout.contains("(RELR)") == packed, "\(binary): glibc \(version)")
        }
    }

    static let examples = [exampleExecutable("example-widget"), exampleExecutable("example-keyboard"),
                           exampleExecutable("example-notification")]

    static func sharedLibraries(of binary: String) throws -> [String] {
        let result = try runCommand("/usr/bin/ldd", [binary])
        return result.stdout.split(separator: "\n").compactMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
    }
}
