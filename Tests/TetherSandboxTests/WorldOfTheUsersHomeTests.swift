import Foundation
import Glibc
import Testing
@testable import TetherSandbox
import TetherLoop
import TetherTestSupport

/// What an extension's world shows of the user's home: its own directories,
/// and of what its bytes and arguments name, only the libraries it loads.
/// The program is the author's, so its RUNPATH and its arguments may name
/// `~/.ssh`. Built from ELF files written here, against a home of the test's own.
@Suite(.timed) struct WorldOfTheUsersHomeTests {
    /// A little-endian ELF64 file with only what the host reads: a dynamic
    /// section (`DT_NEEDED` names, then a `DT_RUNPATH`) and its string table.
    static func elf(needed: [String], runpath: String?) -> [UInt8] {
        var strings: [UInt8] = [0], entries: [(UInt64, UInt64)] = []
        for (tag, text) in needed.map({ (UInt64(1), $0) }) + (runpath.map { [(UInt64(29), $0)] } ?? []) {
            entries.append((tag, UInt64(strings.count)))
            strings += Array(text.utf8) + [0]
        }
        entries.append((0, 0))
        while strings.count % 8 != 0 { strings.append(0) }
        let dynamicAt = 64 + strings.count, sectionsAt = dynamicAt + entries.count * 16
        func number(_ value: UInt64, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var header = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1] + [UInt8](repeating: 0, count: 57)
        header[0x10] = 3  // ET_DYN
        header.replaceSubrange(0x28..<0x30, with: number(UInt64(sectionsAt), 8))
        header.replaceSubrange(0x3A..<0x3C, with: number(64, 2))
        header.replaceSubrange(0x3C..<0x3E, with: number(3, 2))
        func section(type: UInt32, offset: Int, size: Int, link: UInt32) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 64)
            bytes.replaceSubrange(4..<8, with: number(UInt64(type), 4))
            bytes.replaceSubrange(0x18..<0x20, with: number(UInt64(offset), 8))
            bytes.replaceSubrange(0x20..<0x28, with: number(UInt64(size), 8))
            bytes.replaceSubrange(0x28..<0x2C, with: number(UInt64(link), 4))
            return bytes
        }
        return header + strings + entries.flatMap { number($0.0, 8) + number($0.1, 8) }
            + [UInt8](repeating: 0, count: 64)
            + section(type: 6, offset: dynamicAt, size: entries.count * 16, link: 2)
            + section(type: 3, offset: 64, size: strings.count, link: 0)
    }

    /// A home with keys in `.ssh`, a toolchain whose library needs another
    /// beside it, and an extension whose program names both.
    struct Home {
        let scratch: TemporaryDirectory
        var home: String { scratch.path + "/home" }
        var program: String { home + "/ext/prog" }
        var group: String { scratch.path + "/groups/g" }

        init(programRunpath: (String) -> String) throws {
            scratch = try TemporaryDirectory("tether-home-world")
            let home = scratch.path + "/home"
            for directory in ["/.ssh", "/toolchain/lib", "/toolchain/deps", "/ext"] {
                try #require(mkdirp(home + directory))
            }
            try #require(mkdirp(scratch.path + "/groups/g"))
            try writeFile(home + "/.ssh/id_ed25519", "PRIVATE KEY", mode: 0o600)
            try writeFile(home + "/.ssh/config", "Host *", mode: 0o600)
            try write(home + "/toolchain/lib/libgood.so", WorldOfTheUsersHomeTests.elf(needed: ["libdep.so"], runpath: "$ORIGIN/../deps"))
            try write(home + "/toolchain/deps/libdep.so", WorldOfTheUsersHomeTests.elf(needed: [], runpath: nil))
            try write(home + "/toolchain/lib/libother.so", WorldOfTheUsersHomeTests.elf(needed: [], runpath: nil))
            try write(home + "/ext/prog", WorldOfTheUsersHomeTests.elf(needed: ["libgood.so", "libc.so.6", "id_ed25519"],
                                                                     runpath: programRunpath(home)))
        }

        func write(_ path: String, _ bytes: [UInt8]) throws {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            try #require(fd >= 0)
            defer { close(fd) }
            try #require(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count)
        }

        /// The paths the world binds (sources and targets), for `arguments`.
        func shown(arguments: [String] = [], bundle: String? = nil, home: String?) throws -> [String] {
            let policy = SandboxPolicy(role: .keyboard, openAccess: false, group: group, temporaryDirectory: nil, memoryLimitMiB: nil)
            let made = try #require(ExtensionWorld.steps(policy: policy, executable: program, arguments: arguments, bundle: bundle,
                                                        diskLimitMiB: 16, home: home))
            return made.steps.flatMap { step -> [String] in
                switch step {
                case .read(let source, let target, _), .write(let source, let target, _): [source, target]
                default: []
                }
            }
        }
    }

    @Test func theLoaderFindsWhatTheRunpathSaysAndNothingElse() throws {
        let home = try Home { "\($0)/.ssh:\($0)/toolchain/lib" }
        let loaded = ExecutableDependencies.loadedFiles(of: home.program).compactMap(ExtensionWorld.resolved)
        // id_ed25519 is in .ssh, where the RUNPATH says, but no library: a
        // static program's loader never reads what its author's headers say.
        let expected = [home.home + "/toolchain/lib/libgood.so", home.home + "/toolchain/deps/libdep.so"]
        #expect(Set(loaded) == Set(expected.compactMap(ExtensionWorld.resolved)), "\(loaded)")
    }

    /// A RUNPATH naming `~/.ssh` and the toolchain, and an argument naming
    /// `~/.ssh/config`: the libraries the program loads are shown, file by
    /// file; nothing of `.ssh`, nor the rest of the toolchain's directory.
    @Test func ofTheUsersHomeOnlyTheLoadedLibrariesAreShown() throws {
        let home = try Home { "\($0)/.ssh:\($0)/toolchain/lib" }
        let shown = try home.shown(arguments: [home.home + "/.ssh/config"], home: home.home)
        let ssh = home.home + "/.ssh"
        #expect(!shown.contains { $0 == ssh || $0.hasPrefix(ssh + "/") }, "\(shown)")
        #expect(shown.contains(home.home + "/toolchain/lib/libgood.so") && shown.contains(home.home + "/toolchain/deps/libdep.so"),
                "\(shown)")
        #expect(!shown.contains(home.home + "/toolchain/lib") && !shown.contains(home.home + "/toolchain/lib/libother.so"),
                "\(shown)")
        // Its own directory, whole.
        #expect(shown.contains(home.home + "/ext"), "\(shown)")
    }

    /// Outside the user's home, what the program names is shown by
    /// directory, as before: a toolchain in /opt or /srv.
    @Test func outsideTheHomeTheNamedDirectoriesAreShown() throws {
        let home = try Home { "\($0)/toolchain/lib" }
        let shown = try home.shown(home: home.scratch.path + "/another-home")
        #expect(shown.contains(home.home + "/toolchain/lib"), "\(shown)")
    }

    /// A manifest kept in the home itself makes no directory of the home
    /// the extension's own: the home is never shown, so neither is what it holds.
    @Test func aBundleThatIsTheHomeShowsNothingOfIt() throws {
        let home = try Home { "\($0)/.ssh" }
        let shown = try home.shown(bundle: home.home, home: home.home)
        #expect(!shown.contains { $0.hasPrefix(home.home + "/.ssh") }, "\(shown)")
    }

    /// Where extensions write (beside the group: another group's `shared/`),
    /// a file can be a symlink by the time the world is made: nothing the
    /// program names is shown from there, inside the home or out.
    @Test func nothingIsShownFromWhereExtensionsWrite() throws {
        let home = try Home { _ in "" }
        let shared = home.scratch.path + "/groups/other/shared"
        try #require(mkdirp(shared))
        try home.write(shared + "/libgood.so", Self.elf(needed: [], runpath: nil))
        try home.write(home.program, Self.elf(needed: ["libgood.so"], runpath: shared))
        for fakeHome in [home.scratch.path, home.scratch.path + "/elsewhere"] {
            let shown = try home.shown(home: fakeHome)
            #expect(!shown.contains { $0.hasPrefix(shared) }, "\(shown)")
        }
    }

    /// `HOME` unset: the account's home (the password database's) is still
    /// the user's; nothing beneath it is shown whole.
    @Test func withoutHOMETheAccountsHomeIsStillTheUsers() throws {
        let account = try #require(ExtensionWorld.accountHome())
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: account)) ?? []
        let directory = entries.map { account + "/" + $0 }.first { path in
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        }
        guard let directory else { return }  // nothing there to name
        let home = try Home { _ in directory }
        let shown = try home.shown(home: nil)
        #expect(!shown.contains(directory), "\(shown)")
    }

    /// A RUNPATH loop (a library that needs itself, another that needs the
    /// first) ends, and no more than the limit is followed.
    @Test func aLoopOfLibrariesEnds() throws {
        let home = try Home { "\($0)/toolchain/lib" }
        try home.write(home.home + "/toolchain/lib/libgood.so", Self.elf(needed: ["libgood.so", "libdep.so"], runpath: "$ORIGIN"))
        try home.write(home.home + "/toolchain/lib/libdep.so", Self.elf(needed: ["libgood.so"], runpath: "$ORIGIN"))
        #expect(ExecutableDependencies.loadedFiles(of: home.program).count == 2)
        #expect(ExecutableDependencies.loadedFiles(of: home.program, limit: 1).count == 1)
    }
}

private func mkdirp(_ path: String) -> Bool {
    var built = ""
    for part in path.split(separator: "/") {
        built += "/" + part
        if mkdir(built, 0o755) != 0 && errno != EEXIST { return false }
    }
    return true
}
