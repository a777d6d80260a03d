// swift-tools-version:6.0
import PackageDescription

// Tether's benchmarks (`tether-bench`, which `tether bench` runs): a package
// of their own, as swift-nio keeps its Benchmarks/, so nothing of them is in
// the graph of a package that depends on Tether, and the CLI ships without
// them. It depends on this checkout by path; `name:` gives the dependency a
// fixed identity whatever the clone's directory is called.
let package = Package(
    name: "TetherBenchmarks",
    dependencies: [
        .package(name: "Tether", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // What only the benchmarks measure with: a timed, forked run with
        // its rusage; CPU pinning.
        .target(name: "CBenchSystem"),
        .executableTarget(
            name: "tether-bench",
            dependencies: [
                "CBenchSystem",
                .product(name: "TetherLoop", package: "Tether"),
                .product(name: "TetherJSON", package: "Tether"),
                .product(name: "TetherGroup", package: "Tether"),
                .product(name: "TetherHTTP", package: "Tether"),
                .product(name: "TetherAuth", package: "Tether"),
                .product(name: "TetherIPC", package: "Tether"),
                .product(name: "TetherSandbox", package: "Tether"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The token storm with its uncoordinated baselines, one process of many.
        .executableTarget(
            name: "tether-bench-storm",
            dependencies: [
                .product(name: "TetherLoop", package: "Tether"),
                .product(name: "TetherJSON", package: "Tether"),
                .product(name: "TetherGroup", package: "Tether"),
                .product(name: "TetherHTTP", package: "Tether"),
                .product(name: "TetherAuth", package: "Tether"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
