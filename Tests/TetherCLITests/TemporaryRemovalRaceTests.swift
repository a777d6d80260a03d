import Foundation
import Testing
import TetherTestSupport

/// A killed host's leftover TMPDIR is swept by the next host while its
/// extension (here a process of the same user standing in for it) swaps a
/// mode-000 directory for a symlink to an outside file or directory, over
/// and over: the sweep changes no outside mode and removes nothing outside.
/// As `nobody`: root opens a mode-000 directory without making it 0700
/// first, so only another user meets the path that chmods.
/// Where extensions get no world of their own (user namespaces refused):
/// in a world, TMPDIR is a tmpfs the kernel counts (ExtensionWorldTests).
@Suite(.timed, .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                        && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                        "needs root, setpriv and python3 to run the hosts as nobody"))
struct TemporaryRemovalRaceTests {
    /// In TOP, pairs of names, one a mode-000 directory and the other a
    /// symlink to TARGET, exchanged (renameat2 RENAME_EXCHANGE) as fast as
    /// it can; what the sweep removed is made again. Bounded by SECONDS
    /// and a count of exchanges; prints what it did.
    static let swapper = #"""
        import ctypes, os, select, stat, sys, time
        top, outside_file, outside_dir, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
        libc = ctypes.CDLL(None, use_errno=True)
        AT_FDCWD, RENAME_EXCHANGE = -100, 2
        os.chdir(top)
        pairs = [(b"a%d" % i, b"b%d" % i, os.fsencode(outside_file if i % 2 == 0 else outside_dir)) for i in range(8)]
        def kind(name):
            try:
                mode = os.lstat(name).st_mode
            except FileNotFoundError:
                return None
            return "link" if stat.S_ISLNK(mode) else "dir"
        def remake(a, b, target):
            # Only ever a new directory (made 000) or a new symlink: never a
            # chmod, which would follow a symlink itself.
            try:
                ka, kb = kind(a), kind(b)
                if ka is None and kb is None:
                    os.mkdir(a, 0)
                    os.symlink(target, b)
                elif ka is None:
                    os.mkdir(a, 0) if kb == "link" else os.symlink(target, a)
                elif kb is None:
                    os.mkdir(b, 0) if ka == "link" else os.symlink(target, b)
            except (FileExistsError, FileNotFoundError):
                pass
        for a, b, target in pairs:
            remake(a, b, target)
        print("ready", flush=True)
        flips = remade = swept = 0
        deadline = time.monotonic() + seconds
        rounds = 0
        while flips < 50_000_000 and time.monotonic() < deadline:
            # Until the test closes its input: the sweep has run by then.
            rounds += 1
            if rounds % 256 == 0 and select.select([sys.stdin], [], [], 0)[0]:
                break
            for a, b, target in pairs:
                if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
                    flips += 1
                elif os.path.isdir(top):
                    remade += 1
                    remake(a, b, target)
                else:
                    # The sweep took the whole tree between two exchanges
                    # (this process off the CPU meanwhile): it ran while
                    # we swapped, and nothing is left to swap.
                    swept = 1
                    deadline = 0
        print("flips %d remade %d swept %d" % (flips, remade, swept), flush=True)
        """#

    @Test func theSweepNeverFollowsADirectorySwappedForASymlink() throws {
        let fixture = try HostFixture()
        let scratch = fixture.group.dir.path
        let base = scratch + "/tmp"
        let outside = scratch + "/outside"
        #expect(mkdir(base, 0o700) == 0 && mkdir(outside, 0o755) == 0 && mkdir(outside + "/dir", 0o755) == 0)
        try writeFile(outside + "/file", "keep", mode: 0o644)
        try writeFile(outside + "/dir/keep", "keep", mode: 0o644)
        try writeFile(scratch + "/swapper.py", Self.swapper)
        try fixture.addExtension("w", script: #"echo "at $TMPDIR" && exec sleep 60"#)
        // A copy nobody can reach: the checkout may lie in a directory of
        // root's alone (a clone in `mktemp -d`).
        let executable = scratch + "/tether"
        try FileManager.default.copyItem(atPath: tetherExecutable, toPath: executable)
        #expect(chmod(executable, 0o755) == 0)
        #expect(try runCommand("/bin/chown", ["-R", "65534:65534", scratch]).status == 0)
        let environment = fixture.group.environment.merging(["TMPDIR": base, "HOME": scratch]) { $1 }
        func asNobody(_ arguments: [String]) throws -> TestProcess {
            try TestProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + arguments,
                            environment: environment)
        }
        let hostArguments = withoutMechanisms([.namespaces]) + [executable, "host", "--group", fixture.group.path,
                                                                "--extensions-dir", fixture.extensions, "--grace", "2"]
        let first = try asNobody(hostArguments)
        let line = try #require(try first.expectLineStarting("[w] at ", timeout: 30).last)
        let leftover = String(line.dropFirst("[w] at ".count))
        first.signal(SIGKILL)
        _ = try first.waitForExit(timeout: 10)

        let swapper = try asNobody(["/usr/bin/python3", scratch + "/swapper.py", leftover, outside + "/file",
                                    outside + "/dir", "60"])
        _ = try swapper.expectLine("ready", timeout: 20)
        let next = try asNobody(hostArguments)
        defer { next.signal(SIGTERM) }
        // Its sweep of the dead host's directories comes before its ready
        // line: the swapper swaps until then, however long a start takes.
        _ = try next.expectLineStarting("tether host ready: pid \(next.pid)", timeout: 60)
        swapper.closeStdin()
        let done = try #require(try swapper.readLine(timeout: 30))
        #expect(try swapper.waitForExit(timeout: 10) == 0)
        // The sweep ran while it swapped: it removed what was made again,
        // or the whole tree between two exchanges.
        let counts = done.split(separator: " ").compactMap { Int($0) }
        #expect(done.hasPrefix("flips ") && counts.count == 3 && counts[0] > 0 && (counts[1] > 0 || counts[2] == 1), "\(done)")
        print("TemporaryRemovalRaceTests: \(done)")

        var info = stat()
        #expect(lstat(outside + "/file", &info) == 0 && info.st_mode & 0o7777 == 0o644, "the outside file is \(String(info.st_mode, radix: 8))")
        #expect(lstat(outside + "/dir", &info) == 0 && info.st_mode & 0o7777 == 0o755, "the outside directory is \(String(info.st_mode, radix: 8))")
        #expect((try? String(contentsOfFile: outside + "/file", encoding: .utf8)) == "keep")
        #expect((try? String(contentsOfFile: outside + "/dir/keep", encoding: .utf8)) == "keep")
        // Once the swapping is over, the leftover goes (at the latest, at the stop).
        #expect(try next.stop(timeout: 30) == 0)
        #expect(access(leftover, F_OK) != 0, "\(leftover) is still there")
    }
}
