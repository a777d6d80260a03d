import Foundation
import Testing
import TetherTestSupport

/// The binaries on the start-up path link neither Foundation's full library
/// nor its networking (libcurl and its dependency tree; for the examples, a
/// link pulling them in would need libraries their build does not name),
/// and the example extensions are fully static where the machine has the
/// archives (Debian's), else carry the Swift runtime: a host runs thousands
/// of them, and each process mapping shared libraries pays for it at its
/// start and its exit (issue 58's stop of 3,000).
@Suite(.timed) struct StartupLinkageTests {
    @Test func tetherAndTheExamplesLinkNoFoundationNorCurl() throws {
        let forbidden = ["libFoundation.so", "libFoundationNetworking.so", "libcurl", "libFoundationInternationalization.so",
                         "lib_FoundationICU.so"]
        for binary in [tetherExecutable] + Self.examples {
            let libraries = try Self.sharedLibraries(of: binary)
            if binary == tetherExecutable || !Self.staticArchivesPresent {
                #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed \(binary)'s libraries: \(libraries)")
            }
            for library in forbidden {
                #expect(!libraries.contains { $0.hasPrefix(library) }, "\(binary) links \(library): \(libraries)")
            }
        }
        // Linked in, they would be symbols of the executable's own.
        for binary in Self.examples {
            let symbols = try runCommand("/usr/bin/readelf", ["--syms", "--wide", binary])
            #expect(symbols.status == 0, "\(symbols.stderr)")
            // A stripped binary would hold no symbol to look at.
            #expect(symbols.stdout.contains(" main\n"), "\(binary) has no symbol table")
            for module in ["$s10Foundation", "$s20FoundationNetworking", " curl_easy_"] {
                #expect(!symbols.stdout.contains(module), "\(binary) holds \(module)")
            }
        }
    }

    /// No loader, no shared library: nothing to map, relocate or unmap but
    /// the executable. Where the archives are missing, the Swift runtime
    /// and libstdc++ are still linked in (examples/link).
    @Test func theExampleExtensionsAreStaticWhereTheArchivesAre() throws {
        for binary in Self.examples {
            let headers = try runCommand("/usr/bin/readelf", ["--program-headers", "--wide", binary])
            #expect(headers.status == 0, "\(headers.stderr)")
            let interpreted = headers.stdout.contains("INTERP")
            // Archives installed after SwiftPM cached the manifest's answer
            // are used once Package.swift changes (or `swift package purge-cache`).
            #expect(interpreted != Self.staticArchivesPresent,
                    "\(binary): the archives are \(Self.staticArchivesPresent ? "here" : "not here"), the link \(interpreted ? "dynamic" : "static")")
            guard interpreted else { continue }
            let libraries = try Self.sharedLibraries(of: binary)
            #expect(libraries.contains { $0.hasPrefix("libc.so") }, "ldd listed \(binary)'s libraries: \(libraries)")
            let runtime = libraries.filter { library in
                ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime", "libstdc++"]
                    .contains { library.hasPrefix($0) }
            }
            #expect(runtime.isEmpty, "\(binary) maps the Swift runtime's shared libraries: \(runtime)")
        }
    }

    static let examples = [exampleExecutable("example-widget"), exampleExecutable("example-keyboard"),
                           exampleExecutable("example-notification")]

    /// As the manifest looks (Package.swift's `staticLibUV`).
    static let staticArchivesPresent: Bool = {
        #if arch(arm64)
        let multiarch = "/usr/lib/aarch64-linux-gnu"
        #else
        let multiarch = "/usr/lib/x86_64-linux-gnu"
        #endif
        return [multiarch, "/usr/lib64", "/usr/lib"].contains { directory in
            access(directory + "/libc.a", R_OK) == 0 && access(directory + "/libseccomp.a", R_OK) == 0
                && (access(directory + "/libuv.a", R_OK) == 0 || access(directory + "/libuv_a.a", R_OK) == 0)
        }
    }()

    /// What ldd lists; nothing for a static executable ("not a dynamic
    /// executable", exit 1).
    static func sharedLibraries(of binary: String) throws -> [String] {
        let result = try runCommand("/usr/bin/ldd", [binary])
        guard result.status == 0 else { return [] }
        return result.stdout.split(separator: "\n").compactMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
    }
}
