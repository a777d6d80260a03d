// swift-tools-version:6.0
import PackageDescription

// The demo's OAuth server (rotating refresh tokens, reuse detection, device
// login, revocation, discovery), on FlyingFox (an HTTP/1.1 server on a
// socket pool of its own, without SwiftNIO: its first build takes a seventh
// of Hummingbird's CPU, and CI and a first demo build it): a package of
// its own, as swift-nio keeps its benchmarks, so nothing of it is in the
// graph of a package that depends on Tether. examples/demo.sh and .ci/run
// build it; `tether demo` finds it next to tether, on PATH, or by
// --auth-server.
let package = Package(
    name: "DemoAuthServer",
    products: [
        .executable(name: "demo-auth-server", targets: ["DemoAuthServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.0"),
    ],
    targets: [
        .executableTarget(
            name: "DemoAuthServer",
            dependencies: [
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
