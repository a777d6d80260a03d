// swift-tools-version:6.2
import PackageDescription
#if canImport(Glibc)
import Glibc
#endif

// The example extensions are linked as the Debian package's are, fully
// static, where this machine has the archives that takes (Debian's
// libc6-dev, libseccomp-dev and libuv1-dev, which names its archive
// libuv_a.a: examples/link/static maps the name): a host runs thousands of
// them, and each process that maps shared libraries pays for it at its
// start and its exit (issue 58: a stop of 3,000 in a median 1.90 s with
// glibc, libuv and libseccomp shared, 1.70 s static). Elsewhere they carry
// the Swift runtime and libstdc++ (examples/link: a linker script naming
// its archive, searched before the shared library) and share the rest. A
// module compiled against the shared runtime records only
// FoundationEssentials for the link, so its own static libraries are
// named; lld, because gold prints glibc's mktemp warning for them.
// Executables outside every product: a package depending on Tether never
// builds them, so their unsafe flags never reach it (design record).
/// The static libuv's name, where glibc's, libseccomp's and libuv's
/// archives are all in one of the directories scripts/static-build.sh
/// looks in (this machine's architecture's); nil elsewhere.
let staticLibUV: String? = {
    #if canImport(Glibc)
    #if arch(arm64)
    let multiarch = "/usr/lib/aarch64-linux-gnu"
    #else
    let multiarch = "/usr/lib/x86_64-linux-gnu"
    #endif
    for directory in [multiarch, "/usr/lib64", "/usr/lib"] {
        guard access(directory + "/libc.a", R_OK) == 0, access(directory + "/libseccomp.a", R_OK) == 0 else { continue }
        for name in ["libuv.a", "libuv_a.a"] where access(directory + "/" + name, R_OK) == 0 {
            return name
        }
    }
    #endif
    return nil
}()

let examplesLink: [String] = {
    let links = "\(Context.packageDirectory)/examples/link"
    guard let staticLibUV else {
        return ["-static-stdlib", "-use-ld=lld", "-L\(links)"]
    }
    return ["-static-executable", "-use-ld=lld"] + (staticLibUV == "libuv.a" ? [] : ["-L\(links)/static"])
}()

let swiftRuntimeLinkedIn: [LinkerSetting] = [
    .unsafeFlags(examplesLink, .when(platforms: [.linux])),
    .linkedLibrary("_FoundationCollections", .when(platforms: [.linux])),
    .linkedLibrary("_FoundationCShims", .when(platforms: [.linux])),
]

let package = Package(
    name: "Tether",
    products: [
        // What a user's package depends on: the SDK an extension imports, and
        // the group (liveness locks, shared defaults) for an app that reads
        // it from Swift. Every other module is this package's own: its
        // declarations are `package`, not `public` (docs/design-record.md).
        .library(name: "TetherExtension", targets: ["TetherExtension"]),
        .library(name: "TetherGroup", targets: ["TetherGroup"]),
        // For extension authors: check and embed a manifest at build time;
        // scaffold a new extension (`swift package new-extension`). The demo's
        // auth server (FlyingFox) is a package of its own, in
        // examples/DemoAuthServer: nothing heavy is in this graph.
        .plugin(name: "TetherManifestPlugin", targets: ["TetherManifestPlugin"]),
        .plugin(name: "NewExtension", targets: ["NewExtension"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // The host's numbers (swift-metrics), exposed as Prometheus text.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
    ],
    targets: [
        // libuv, found through pkg-config. `apt-get install libuv1-dev` provides it.
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"]), .brew(["libuv"])]
        ),
        // libseccomp, for the network filter of confined extensions.
        // `apt-get install libseccomp-dev` provides it.
        .systemLibrary(
            name: "CSeccomp",
            pkgConfig: "libseccomp",
            providers: [.apt(["libseccomp-dev"])]
        ),
        // Syscalls Swift cannot call directly (variadic in C), and the steps
        // between clone and exec.
        .target(name: "CTetherSystem"),
        // libcurl's ABI, loaded with dlopen at the first HTTP request: no
        // build dependency, and a process without HTTP never maps it.
        .target(name: "CTetherCurl", linkerSettings: [.linkedLibrary("dl")]),
        // D-Bus through sd-bus (libsystemd0), loaded at run time: the one
        // D-Bus client (the user's manager, notifications, IBus).
        .target(name: "CTetherBus", linkerSettings: [.linkedLibrary("dl")]),
        // Kernel confinement per role: Landlock, a seccomp filter, limits.
        .target(
            name: "TetherSandbox",
            dependencies: ["CTetherSystem", "CSeccomp", "TetherGroup", "TetherLoop", "TetherManifest",
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The only module that touches libuv handles or unmanaged pointers.
        .target(
            name: "TetherLoop",
            dependencies: [
                "CLibUV",
                "CTetherSystem",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // JSON values and a byte-level reader/writer: the socket protocol and
        // the shared stores both speak it.
        .target(name: "TetherJSON", linkerSettings: [.linkedLibrary("m")]),
        // Output that never traps or blocks: a swift-log handler (text or
        // JSON lines, secrets redacted) over non-blocking, bounded writers.
        .target(
            name: "TetherLog",
            dependencies: ["TetherLoop", "TetherJSON", .product(name: "Logging", package: "swift-log")]
        ),
        // The group directory: layout, permissions, liveness locks, stores.
        .target(
            name: "TetherGroup",
            dependencies: [
                "CTetherSystem",
                "TetherLoop",
                "TetherJSON",
                "TetherManifest",  // the name rule (TetherName)
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // HTTP(S) on the libuv loop: libcurl's multi-socket interface on
        // uv_poll and uv_timer, no thread or event loop of its own.
        .target(name: "TetherHTTP", dependencies: ["CTetherCurl", "TetherLoop",
                                                   .product(name: "SystemPackage", package: "swift-system")]),
        // An extension manifest's rules (parse and validate, nothing else):
        // the host's, and the build plugin's tool's.
        .target(name: "TetherManifest", dependencies: ["TetherJSON"]),
        // Tokens: JWT expiry, the RFC 6749 client, the cross-process broker.
        .target(
            name: "TetherAuth",
            dependencies: [
                "TetherBus", "TetherGroup", "TetherHTTP", "TetherJSON", "TetherLoop", "TetherLog",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // D-Bus on the libuv loop: sd-bus's descriptor, events and timeout
        // on uv_poll and uv_timer, as TetherHTTP drives libcurl.
        .target(name: "TetherBus", dependencies: ["CTetherBus", "TetherLoop",
                                                  .product(name: "SystemPackage", package: "swift-system")]),
        // JSON-RPC 2.0 over Unix sockets on TetherLoop, from framing to
        // servers: knows nothing of Tether's messages.
        .target(name: "TetherRPC", dependencies: ["TetherLoop", "TetherJSON", "CTetherSystem",
                                                  .product(name: "SystemPackage", package: "swift-system")]),
        // Tether's messages: the methods, who may call them, their parameters and answers.
        .target(name: "TetherIPC", dependencies: ["TetherRPC", "TetherJSON", "TetherLoop"]),
        // The supervisor: manifests, extension processes, features, the socket.
        .target(
            name: "TetherHost",
            dependencies: ["TetherIPC", "TetherAuth", "TetherGroup", "TetherHTTP", "TetherLoop", "TetherLog", "CTetherSystem",
                           "TetherBus", "TetherManifest", "TetherSandbox", .product(name: "SystemPackage", package: "swift-system"),
                           .product(name: "CoreMetrics", package: "swift-metrics"),
                           .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        // The SDK an extension author imports: roles, context, host connection.
        .target(
            name: "TetherExtension",
            dependencies: ["TetherIPC", "TetherAuth", "TetherGroup", "TetherHTTP", "TetherLoop", "TetherLog", "TetherManifest",
                           "TetherSandbox", "CTetherSystem", .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The manifest check the build plugin runs: the host's own rules,
        // and nothing of the host.
        .executableTarget(name: "TetherManifestTool", dependencies: ["TetherManifest", "TetherJSON"]),
        .plugin(name: "TetherManifestPlugin", capability: .buildTool(), dependencies: ["TetherManifestTool"]),
        // A new extension in an author's package, through the toolchain's
        // own package editing: `tether new-extension`, and the plugin's tool.
        .target(name: "TetherScaffold", dependencies: ["TetherGroup", "TetherJSON", "TetherLoop", "TetherManifest"]),
        // The plugin's tool: no product, so SwiftPM builds it only when the
        // plugin runs, never in an author's `swift build`.
        .executableTarget(name: "TetherScaffoldTool", dependencies: ["TetherScaffold"]),
        .plugin(
            name: "NewExtension",
            capability: .command(
                intent: .custom(verb: "new-extension",
                                description: "Scaffold an extension: Sources/NAME with its code and manifest, and its target"),
                permissions: [.writeToPackageDirectory(reason: "It writes Sources/NAME/ and adds the target to Package.swift.")]
            ),
            dependencies: ["TetherScaffoldTool"]
        ),
        // The example extensions; the manifests in examples/extensions run them.
        .executableTarget(name: "example-widget", dependencies: ["TetherExtension"], path: "examples/ExampleWidget",
                          linkerSettings: swiftRuntimeLinkedIn),
        .executableTarget(name: "example-keyboard", dependencies: ["TetherExtension"], path: "examples/ExampleKeyboard",
                          linkerSettings: swiftRuntimeLinkedIn),
        // Many tasks asking for a token at once (the demo's and the tests' storms).
        .executableTarget(name: "example-token-storm", dependencies: ["TetherAuth", "TetherGroup", "TetherHTTP", "TetherJSON", "TetherLog", "TetherLoop"],
                          path: "examples/TokenStorm"),
        .executableTarget(name: "example-notification", dependencies: ["TetherExtension"],
                          path: "examples/ExampleNotification", linkerSettings: swiftRuntimeLinkedIn),
        // `tether demo`'s day: the stage, its processes, the checks. A module
        // of its own so the CLI's body is commands only.
        .target(
            name: "TetherDemo",
            dependencies: ["CTetherSystem", "TetherAuth", "TetherGroup", "TetherHTTP", "TetherJSON", "TetherLog", "TetherLoop",
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        .executableTarget(
            name: "tether",
            dependencies: [
                "TetherDemo",
                "TetherLoop",
                "TetherLog",
                "TetherGroup",
                "TetherIPC",
                "TetherAuth",
                "TetherHTTP",
                "TetherHost",
                "TetherManifest",
                "TetherSandbox",
                "TetherScaffold",
                "CTetherSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The benchmarks (`tether-bench`, which `tether bench` runs, and the
        // token storm's one process): executable targets without products,
        // as `tether` is, so a package depending on Tether never builds them,
        // and they measure with this package's own (`package`) API.
        // CBenchSystem: a timed, forked run with its rusage; CPU pinning.
        .target(name: "CBenchSystem", path: "Benchmarks/Sources/CBenchSystem"),
        .executableTarget(
            name: "tether-bench",
            dependencies: ["CBenchSystem", "TetherLoop", "TetherJSON", "TetherGroup", "TetherHTTP", "TetherAuth", "TetherIPC",
                           "TetherSandbox", "TetherLog", "CTetherSystem", .product(name: "SystemPackage", package: "swift-system"),
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Benchmarks/Sources/tether-bench"
        ),
        .executableTarget(name: "tether-bench-storm", dependencies: ["TetherLoop", "TetherJSON", "TetherGroup", "TetherHTTP", "TetherAuth"],
                          path: "Benchmarks/Sources/tether-bench-storm"),
        // Extensions the SDK's tests run (one executable; the first argument
        // picks the role and behaviour). Built with the tests, not installed.
        .executableTarget(name: "SDKFixture", dependencies: ["TetherExtension", "TetherAuth", "TetherGroup", "TetherSandbox",
                                                            "TetherLoop", "CTetherSystem"], path: "Tests/SDKFixture"),
        // Helpers the test targets share: temporary groups, child processes
        // with bounded waits, a loop harness.
        .target(name: "TetherTestSupport", dependencies: ["TetherLoop", "TetherGroup", "TetherSandbox", "CTetherSystem"],
                path: "Tests/TetherTestSupport"),
        .testTarget(name: "TetherLoopTests", dependencies: ["TetherLoop", "TetherTestSupport", "CTetherSystem"]),
        .testTarget(name: "TetherJSONTests", dependencies: ["TetherJSON"]),
        .testTarget(name: "TetherLogTests", dependencies: ["TetherLog", "TetherLoop", "TetherJSON", "TetherTestSupport",
                                                          .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TetherGroupTests", dependencies: ["TetherGroup", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherHTTPTests", dependencies: ["TetherHTTP", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherManifestTests", dependencies: ["TetherManifest"]),
        .testTarget(name: "TetherScaffoldTests", dependencies: ["TetherScaffold", "TetherManifest", "TetherTestSupport"]),
        .testTarget(name: "TetherAuthTests", dependencies: ["TetherAuth", "TetherGroup", "TetherHTTP", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherBusTests", dependencies: ["TetherBus", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherRPCTests", dependencies: ["TetherRPC", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherIPCTests", dependencies: ["TetherIPC", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherHostTests", dependencies: ["TetherHost", "TetherTestSupport"]),
        .testTarget(name: "TetherSandboxTests", dependencies: ["TetherSandbox", "TetherTestSupport", "CTetherSystem"]),
        .testTarget(name: "TetherExtensionTests", dependencies: ["TetherExtension", "TetherTestSupport"]),
        // Drives the built `tether` executable as a user or script would.
        .testTarget(name: "TetherCLITests", dependencies: ["TetherGroup", "TetherLoop", "TetherTestSupport", "CTetherSystem", "TetherSandbox",
                                                         "TetherIPC", "TetherManifest"]),
        // The command line's readers in-process (the CLI module itself).
        .testTarget(name: "TetherCommandTests", dependencies: ["tether"]),
        // Scaffolds, builds and runs an extension in a package of its own that depends on this one.
        .testTarget(name: "TetherPluginTests", dependencies: ["TetherTestSupport"]),
        .testTarget(name: "DocumentationTests", dependencies: ["TetherTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
