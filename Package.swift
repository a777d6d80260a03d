// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tether",
    products: [
        .executable(name: "tether", targets: ["tether"]),
        .library(name: "TetherLoop", targets: ["TetherLoop"]),
        .library(name: "TetherJSON", targets: ["TetherJSON"]),
        .library(name: "TetherLog", targets: ["TetherLog"]),
        .library(name: "TetherGroup", targets: ["TetherGroup"]),
        .library(name: "TetherAuth", targets: ["TetherAuth"]),
        .library(name: "TetherIPC", targets: ["TetherIPC"]),
        .library(name: "TetherHost", targets: ["TetherHost"]),
        .library(name: "TetherExtension", targets: ["TetherExtension"]),
        // The example extensions; the manifests in examples/extensions run them.
        .executable(name: "example-widget", targets: ["ExampleWidget"]),
        .executable(name: "example-keyboard", targets: ["ExampleKeyboard"]),
        .executable(name: "example-notification", targets: ["ExampleNotification"]),
        // A local OAuth server with rotating refresh tokens, for the demo and tests.
        .executable(name: "demo-auth-server", targets: ["DemoAuthServer"]),
        // For extension authors: check and embed a manifest at build time;
        // scaffold a new extension (`swift package new-extension`).
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
        // HTTP(S) for token requests and fetchJSON without Foundation's
        // networking (libcurl and its 40 shared libraries) on the start-up path.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        // The parser new-extension edits Package.swift with. A range, so an
        // author's macros (which pin their own swift-syntax) still resolve.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"604.0.0"),
        // Only the demo auth server (examples/) uses these two.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.0"),
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
        // Kernel confinement per role: Landlock, a seccomp filter, limits.
        .target(
            name: "TetherSandbox",
            dependencies: ["CTetherSystem", "CSeccomp", "TetherLoop", "TetherIPC",
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
        .target(name: "TetherJSON"),
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
                "TetherLoop",
                "TetherJSON",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Tokens: JWT expiry, the RFC 6749 client, the cross-process broker,
        // and HTTP without Foundation (async-http-client).
        .target(
            name: "TetherAuth",
            dependencies: [
                "TetherGroup", "TetherJSON", "TetherLoop", "TetherLog",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // JSON-RPC 2.0 over the host's Unix socket, on TetherLoop.
        .target(name: "TetherIPC", dependencies: ["TetherLoop", "TetherJSON", "CTetherSystem"]),
        // The supervisor: manifests, extension processes, features, the socket.
        .target(
            name: "TetherHost",
            dependencies: ["TetherIPC", "TetherAuth", "TetherGroup", "TetherLoop", "TetherLog", "CTetherSystem",
                           "TetherSandbox", .product(name: "SystemPackage", package: "swift-system"),
                           .product(name: "CoreMetrics", package: "swift-metrics"),
                           .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        // The SDK an extension author imports: roles, context, host connection.
        .target(
            name: "TetherExtension",
            dependencies: ["TetherIPC", "TetherAuth", "TetherGroup", "TetherLoop", "TetherLog", "TetherSandbox",
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The manifest check the build plugin runs: the host's own rules.
        .executableTarget(name: "TetherManifestTool", dependencies: ["TetherHost", "TetherJSON", "TetherLog"]),
        .plugin(name: "TetherManifestPlugin", capability: .buildTool(), dependencies: ["TetherManifestTool"]),
        // Adds a target to a package's own targets list, found by the Swift
        // parser: what new-extension runs on Package.swift.
        .executableTarget(
            name: "TetherPackageEditor",
            dependencies: [
                "TetherGroup",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        ),
        .plugin(
            name: "NewExtension",
            capability: .command(
                intent: .custom(verb: "new-extension",
                                description: "Scaffold an extension: Sources/NAME with its code and manifest, and its target"),
                permissions: [.writeToPackageDirectory(reason: "It writes Sources/NAME/ and adds the target to Package.swift.")]
            ),
            dependencies: ["TetherPackageEditor"]
        ),
        .executableTarget(name: "ExampleWidget", dependencies: ["TetherExtension"], path: "examples/ExampleWidget"),
        .executableTarget(name: "ExampleKeyboard", dependencies: ["TetherExtension"], path: "examples/ExampleKeyboard"),
        .executableTarget(name: "ExampleNotification", dependencies: ["TetherExtension"],
                          path: "examples/ExampleNotification"),
        .executableTarget(
            name: "DemoAuthServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "examples/DemoAuthServer"
        ),
        .executableTarget(
            name: "tether",
            dependencies: [
                "TetherLoop",
                "TetherLog",
                "TetherGroup",
                "TetherIPC",
                "TetherAuth",
                "TetherHost",
                "TetherSandbox",
                "CTetherSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Extensions the SDK's tests run (one executable; the first argument
        // picks the role and behaviour). Built with the tests, not installed.
        .executableTarget(name: "SDKFixture", dependencies: ["TetherExtension"], path: "Tests/SDKFixture"),
        // Helpers the test targets share: temporary groups, child processes
        // with bounded waits, a loop harness.
        .target(name: "TetherTestSupport", dependencies: ["TetherLoop"], path: "Tests/TetherTestSupport"),
        .testTarget(name: "TetherLoopTests", dependencies: ["TetherLoop", "TetherTestSupport", "CTetherSystem"]),
        .testTarget(name: "TetherJSONTests", dependencies: ["TetherJSON"]),
        .testTarget(name: "TetherLogTests", dependencies: ["TetherLog", "TetherLoop", "TetherJSON", "TetherTestSupport",
                                                          .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TetherGroupTests", dependencies: ["TetherGroup", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherAuthTests", dependencies: ["TetherAuth", "TetherGroup", "TetherTestSupport"]),
        .testTarget(name: "TetherIPCTests", dependencies: ["TetherIPC", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherHostTests", dependencies: ["TetherHost", "TetherTestSupport"]),
        .testTarget(name: "TetherSandboxTests", dependencies: ["TetherSandbox", "TetherTestSupport"]),
        .testTarget(name: "TetherExtensionTests", dependencies: ["TetherExtension", "TetherTestSupport"]),
        // Drives the built `tether` executable as a user or script would.
        .testTarget(name: "TetherCLITests", dependencies: ["TetherGroup", "TetherTestSupport", "CTetherSystem", "TetherSandbox",
                                                         "TetherIPC"]),
        // Scaffolds, builds and runs an extension in a package of its own that depends on this one.
        .testTarget(name: "TetherPluginTests", dependencies: ["TetherTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
