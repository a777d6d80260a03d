import Glibc
import Testing
import TetherSandbox
import TetherTestSupport

/// What worlds show at /etc: the host's copies of real files, brought up to
/// date when a source changes (in place, by rename, or goes), never opened
/// when a source is not a file or a directory.
@Suite(.timed) struct WorldConfigurationTests {
    struct Sources {
        let scratch: TemporaryDirectory
        var source: String { scratch.path + "/etc" }
        var parent: String { scratch.path + "/host" }
        var paths: [String] { ["hosts", "passwd", "resolv.conf", "ssl", "fifo", "missing", "huge"].map { source + "/" + $0 } }

        init() throws {
            scratch = try TemporaryDirectory("tether-etc")
            #expect(mkdir(source, 0o755) == 0 && mkdir(parent, 0o700) == 0 && mkdir(source + "/ssl", 0o755) == 0)
            try writeFile(source + "/hosts", "127.0.0.1 localhost\n", mode: 0o666)
            try writeFile(source + "/passwd", "root:x:0:0\n", mode: 0o600)
            // A managed resolver's file: a link to where it is kept.
            try writeFile(scratch.path + "/stub-resolv.conf", "nameserver 127.0.0.53\n")
            #expect(symlink(scratch.path + "/stub-resolv.conf", source + "/resolv.conf") == 0)
            #expect(mkfifo(source + "/fifo", 0o644) == 0)
            // Past what a copy may be (sparse: no disk).
            let huge = open(source + "/huge", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            #expect(huge >= 0 && ftruncate(huge, 17 << 20) == 0)
            close(huge)
        }
    }

    @Test func copiesAreMadeThenFollowTheirSources() throws {
        let sources = try Sources()
        let configuration = try WorldConfiguration(parent: sources.parent, sources: sources.paths)
        try configuration.refresh()
        let copies = configuration.directory
        #expect(try readText(copies + "/hosts") == "127.0.0.1 localhost\n")
        #expect(try readText(copies + "/resolv.conf") == "nameserver 127.0.0.53\n")
        // Never more open than its source, never a link.
        #expect(mode(copies + "/hosts") == 0o644 && mode(copies + "/passwd") == 0o600)
        #expect(kind(copies + "/resolv.conf") == S_IFREG)
        #expect(kind(copies + "/ssl") == S_IFDIR)
        for absent in ["fifo", "missing", "huge"] { #expect(kind(copies + "/" + absent) == nil, "\(absent)") }
        #expect(configuration.directoryBinds().map(\.target) == [sources.source + "/ssl"])

        // Unchanged: left as it is.
        let before = inode(copies + "/hosts")
        try configuration.refresh()
        #expect(inode(copies + "/hosts") == before)

        // Changed in place, same size: its time tells.
        try writeFile(sources.source + "/hosts", "127.0.0.2 localhost\n")
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, sources.source + "/hosts", &times, 0) == 0)
        try configuration.refresh()
        #expect(try readText(copies + "/hosts") == "127.0.0.2 localhost\n")

        // Replaced by rename where the link points: followed.
        try writeFile(sources.scratch.path + "/next", "nameserver 10.0.0.1\n")
        #expect(rename(sources.scratch.path + "/next", sources.scratch.path + "/stub-resolv.conf") == 0)
        try configuration.refresh()
        #expect(try readText(copies + "/resolv.conf") == "nameserver 10.0.0.1\n")

        // Gone from the machine: gone from the copies.
        #expect(unlink(sources.source + "/passwd") == 0)
        try configuration.refresh()
        #expect(kind(copies + "/passwd") == nil)

        // A copy removed by someone else (a cleaner of /tmp): made again.
        #expect(unlink(copies + "/hosts") == 0)
        try configuration.refresh()
        #expect(try readText(copies + "/hosts") == "127.0.0.2 localhost\n")

        // Made less open: so is its copy.
        #expect(chmod(sources.source + "/hosts", 0o600) == 0)
        try configuration.refresh()
        #expect(mode(copies + "/hosts") == 0o600)

        // A directory that became a file: its mount point goes, and the
        // refresh says so (worlds made before would bind it).
        #expect(try configuration.refresh() == false)
        #expect(rmdir(sources.source + "/ssl") == 0)
        try writeFile(sources.source + "/ssl", "now a file\n")
        #expect(try configuration.refresh() == true)
        #expect(kind(copies + "/ssl") == S_IFREG && configuration.directoryBinds().isEmpty)

        // The whole directory removed by a cleaner of /tmp: made again.
        configuration.remove()
        #expect(kind(copies) == nil)
        try configuration.refresh()
        #expect(try readText(copies + "/hosts") == "127.0.0.2 localhost\n")
        configuration.remove()
    }

    @Test func aSymlinkPlantedForItsDirectoryIsRefused() throws {
        let sources = try Sources()
        #expect(symlink(sources.source, sources.parent + "/world-etc") == 0)
        #expect(throws: (any Error).self) { try WorldConfiguration(parent: sources.parent, sources: sources.paths) }
    }

    private func readText(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
    }

    private func kind(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    private func inode(_ path: String) -> ino_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_ino : 0
    }
}
