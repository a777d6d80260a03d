// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tether",
    products: [
        .executable(name: "tether", targets: ["tether"]),
        .library(name: "TetherLoop", targets: ["TetherLoop"]),
        .library(name: "TetherGroup", targets: ["TetherGroup"]),
        .library(name: "TetherIPC", targets: ["TetherIPC"]),
        .library(name: "TetherHost", targets: ["TetherHost"]),
        .library(name: "TetherExtension", targets: ["TetherExtension"]),
        // The example extensions; the manifests in examples/extensions run them.
        .executable(name: "example-widget", targets: ["ExampleWidget"]),
        .executable(name: "example-keyboard", targets: ["ExampleKeyboard"]),
        .executable(name: "example-notification", targets: ["ExampleNotification"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        // libuv, found through pkg-config. `apt-get install libuv1-dev` provides it.
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"]), .brew(["libuv"])]
        ),
        // Syscalls Swift cannot call directly (variadic in C).
        .target(name: "CTetherSystem"),
        // The only module that touches libuv handles or unmanaged pointers.
        .target(
            name: "TetherLoop",
            dependencies: [
                "CLibUV",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The group directory: layout, permissions, liveness locks.
        .target(
            name: "TetherGroup",
            dependencies: [
                "TetherLoop",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // JSON-RPC 2.0 over the host's Unix socket, on TetherLoop.
        .target(name: "TetherIPC", dependencies: ["TetherLoop"]),
        // The supervisor: manifests, extension processes, features, the socket.
        .target(name: "TetherHost", dependencies: ["TetherIPC", "TetherGroup", "TetherLoop"]),
        // The SDK an extension author imports: roles, context, host connection.
        .target(name: "TetherExtension", dependencies: ["TetherIPC", "TetherGroup", "TetherLoop"]),
        .executableTarget(name: "ExampleWidget", dependencies: ["TetherExtension"], path: "examples/ExampleWidget"),
        .executableTarget(name: "ExampleKeyboard", dependencies: ["TetherExtension"], path: "examples/ExampleKeyboard"),
        .executableTarget(name: "ExampleNotification", dependencies: ["TetherExtension"],
                          path: "examples/ExampleNotification"),
        .executableTarget(
            name: "tether",
            dependencies: [
                "TetherLoop",
                "TetherGroup",
                "TetherIPC",
                "TetherHost",
                "CTetherSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Helpers the test targets share: temporary groups, child processes
        // with bounded waits, a loop harness.
        .target(name: "TetherTestSupport", dependencies: ["TetherLoop"], path: "Tests/TetherTestSupport"),
        .testTarget(name: "TetherLoopTests", dependencies: ["TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherGroupTests", dependencies: ["TetherGroup", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherIPCTests", dependencies: ["TetherIPC", "TetherLoop", "TetherTestSupport"]),
        .testTarget(name: "TetherHostTests", dependencies: ["TetherHost", "TetherTestSupport"]),
        .testTarget(name: "TetherExtensionTests", dependencies: ["TetherExtension", "TetherTestSupport"]),
        // Drives the built `tether` executable as a user or script would.
        .testTarget(name: "TetherCLITests", dependencies: ["TetherGroup", "TetherTestSupport", "CTetherSystem"]),
    ],
    swiftLanguageModes: [.v6]
)
