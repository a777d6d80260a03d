import Glibc
import Testing
@testable import TetherSandbox
import TetherTestSupport

/// What an extension's world binds so its program still starts: read by
/// the host from a file the extension's author controls, so a hostile
/// file must never trap the host, block it, or make it read without bound.
@Suite(.timed) struct ExecutableDependenciesTests {
    /// A Swift program's RUNPATH, `$ORIGIN` made its own directory. The
    /// tests' extension links the runtime as an author's build does (the
    /// examples carry it in themselves).
    @Test func aSwiftProgramsRunpathIsFound() throws {
        let program = exampleExecutable("SDKFixture")
        let directories = ExecutableDependencies.directories(of: program)
        #expect(directories.contains(ExecutableDependencies.directory(of: program)), "\(directories)")
        #expect(directories.contains { $0.hasSuffix("/lib/swift/linux") }, "\(directories)")
        #expect(directories.allSatisfy { $0.hasPrefix("/") && !$0.contains("$") })
    }

    /// A script's interpreter's directory; nothing for a relative one, a
    /// directory, a FIFO (never waited on for a writer), or nothing there.
    @Test func aScriptsInterpreterAndNothingElse() throws {
        let scratch = try TemporaryDirectory("tether-dependencies")
        let cases: [(String, [String])] = [
            ("#!/usr/bin/env python3\nprint(1)\n", ["/usr/bin"]), ("#!/bin/sh -e\n", ["/bin"]),
            ("#!sh\n", []), // Only the first 64 bytes are read.
            ("#!" + String(repeating: "/x", count: 100), [String(repeating: "/x", count: 30)]),
            ("#!", []), ("plain text, no header", []),
        ]
        for (index, (content, expected)) in cases.enumerated() {
            let path = scratch.path + "/script\(index)"
            try writeFile(path, content, mode: 0o755)
            #expect(ExecutableDependencies.directories(of: path) == expected, "\(content)")
        }
        #expect(mkfifo(scratch.path + "/fifo", 0o600) == 0)
        for path in [scratch.path, scratch.path + "/fifo", scratch.path + "/missing"] {
            #expect(ExecutableDependencies.directories(of: path).isEmpty, "\(path)")
        }
    }

    /// A real ELF cut short anywhere, its section table's numbers at their
    /// extremes, and bytes flipped at random through its headers: every
    /// one is read without a trap, and none yields a relative directory.
    @Test func aHostileELFNeverTrapsTheHost() throws {
        let scratch = try TemporaryDirectory("tether-dependencies")
        let original = try #require(readBytes(exampleExecutable("SDKFixture")))
        try #require(original.count > 4_096 && original[0] == 0x7F)
        let path = scratch.path + "/program"
        /// What it reads from `path` holds only absolute directories.
        func expectReadable() {
            let directories = ExecutableDependencies.directories(of: path)
            #expect(directories.allSatisfy { $0.hasPrefix("/") }, "\(directories)")
        }
        for length in stride(from: 0, to: 4_096, by: 61) {
            try writeBytes(path, Array(original.prefix(length)))
            expectReadable()
        }
        // The program whole, each variant's bytes written over it and put back.
        try writeBytes(path, original)
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        func write(_ changes: [(Int, UInt8)]) throws {
            for (at, byte) in changes {
                try #require(withUnsafeBytes(of: byte) { pwrite(fd, $0.baseAddress, 1, off_t(at)) } == 1)
            }
        }
        func number(_ at: Int, _ width: Int) -> Int {
            Int(original[at..<(at + width)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
        let sectionTable = number(0x28, 8), entrySize = number(0x3A, 2), sections = number(0x3C, 2)
        try #require(sectionTable > 0 && sectionTable + entrySize * sections <= original.count)
        // The dynamic section (type 6): its tags and string offsets.
        let dynamic = try #require((0..<sections).lazy.map { sectionTable + $0 * entrySize }.first { number($0 + 4, 4) == 6 })
        let (dynamicOffset, dynamicSize) = (number(dynamic + 0x18, 8), number(dynamic + 0x20, 8))
        try #require(dynamicSize > 0 && dynamicOffset + dynamicSize <= original.count)
        var random = SplitMix64(seed: 0x7e7e_0058)
        // e_shoff (8 bytes at 0x28), e_shentsize (0x3A), e_shnum (0x3C).
        let extremes: [(at: Int, width: Int, values: [UInt64])] = [
            (0x28, 8, [0, 1, UInt64(original.count - 1), UInt64(original.count), 1 << 62, 1 << 63, .max]),
            (0x3A, 2, [0, 1, 15, 63, 64, 65, 0xFFFF]),
            (0x3C, 2, [0, 1, 2, 4_095, 4_096, 0xFFFF]),
        ]
        var variants: [[(Int, UInt8)]] = []
        for field in extremes {
            for value in field.values {
                variants.append((0..<field.width).map { (field.at + $0, UInt8(truncatingIfNeeded: value >> (8 * UInt64($0)))) })
            }
        }
        // Bytes flipped in the header, the section table and the dynamic
        // section, where the numbers it follows live.
        let regions = [(0, 64), (sectionTable, entrySize * sections), (dynamicOffset, dynamicSize)]
        for _ in 0..<400 {
            variants.append((0..<8).map { _ in
                let (start, size) = regions[Int(random.next() % 3)]
                return (start + Int(random.next() % UInt64(size)), UInt8(truncatingIfNeeded: random.next()))
            })
        }
        for changes in variants {
            try write(changes)
            expectReadable()
            try write(changes.map { ($0.0, original[$0.0]) })
        }
    }

    func writeBytes(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    func readBytes(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard got > 0 else { return got == 0 ? bytes : nil }
            bytes += chunk.prefix(got)
        }
    }
}

/// A seeded generator (SplitMix64): the same hostile files on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
