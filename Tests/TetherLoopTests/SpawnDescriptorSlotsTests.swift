import CTetherSystem
import Dispatch
import Glibc
import Synchronization
import Testing
import TetherTestSupport

/// The spawn's low descriptor slots (`tether_spawn_reserve_descriptors`): a
/// child copies only the table below them, and each spawn's descriptors
/// are its own however many threads spawn at once.
@Suite(.timed) struct SpawnDescriptorSlotsTests {
    /// A parent whose descriptors reach number 3,000 gives its child a
    /// small table: the kernel's `FDSize` of the child is the table it copied
    /// (exec closes the close-on-exec ones but keeps the table's size).
    @Test func aChildCopiesOnlyTheLowDescriptorsHoweverManyTheParentHolds() throws {
        tether_spawn_reserve_descriptors()
        // The table's size follows the highest number open: one at 3,000
        // makes this process's 4,096 (the limit caps numbers, not counts).
        let high: Int32 = 3_000
        var previous = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &previous)
        var raised = previous
        raised.rlim_cur = max(previous.rlim_cur, rlim_t(high) + 100)
        try #require(raised.rlim_cur <= previous.rlim_max && setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0,
                     "this test needs a descriptor limit above \(high + 100) (hard limit \(previous.rlim_max))")
        // Left raised: lowered, it could cut under another test of this
        // process that raised it meanwhile.
        let base = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(base >= 0)
        defer { close(base) }
        // A crowd below it too, as a host's are.
        var descriptors: [Int32] = [fcntl(base, F_DUPFD_CLOEXEC, high)]
        defer { for fd in descriptors where fd >= 0 { close(fd) } }
        try #require(descriptors[0] >= high, "dup: errno \(errno)")
        for _ in 0..<500 {
            let fd = fcntl(base, F_DUPFD_CLOEXEC, 1_000)
            try #require(fd >= 0, "dup: errno \(errno)")
            descriptors.append(fd)
        }
        let status = try spawnAndRead(["/bin/cat", "/proc/self/status"])
        let line = status.split(separator: "\n").first { $0.hasPrefix("FDSize:") }
        let size = line.flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).last ?? "") }
        let table = try #require(size, "no FDSize in: \(status)")
        #expect(table < 1_024, "the child's table holds \(table) descriptors; the parent's reaches \(high)")
    }

    /// Four threads spawning at once, each child writing its own token to
    /// its own pipe: every token arrives where it was sent, once, and every
    /// pipe ends (no slot keeps a child's writing end).
    @Test func concurrentSpawnsEachGetTheirOwnDescriptors() throws {
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<25 {
                let token = "t\(thread)-\(round)"
                do {
                    let output = try spawnAndRead(["/bin/echo", token])
                    if output != token + "\n" { failures.withLock { $0.append("\(token) read \(output.debugDescription)") } }
                } catch {
                    failures.withLock { $0.append("\(token): \(error)") }
                }
            }
        }
        let seen = failures.withLock { $0 }
        #expect(seen.isEmpty, "\(seen.prefix(5))")
    }

    /// Under an outer seccomp filter that refuses both ways to a table of
    /// its own (`close_range`'s unshare, `unshare`), or a clone that shares
    /// the table, a spawn copies the whole table as before, that spawn and
    /// the next. (Without the fallback, every spawn failed with EPERM.)
    @Test(arguments: ["unshare", "clone"]) func aChildThatCannotShareOrUnshareTheTableIsSpawnedAsBefore(_ refused: String) throws {
        let fixture = try runCommand(exampleExecutable("SDKFixture"), ["spawn-without-unshare", refused])
        #expect(fixture.status == 0, "\(fixture.stderr)")
        #expect(fixture.stdout == "one\ntwo\n", "\(fixture.stdout)")
    }
}

struct SpawnFailure: Error, CustomStringConvertible {
    let description: String
}

/// Spawns `argv` with its stdout on a pipe (stdin, stderr: /dev/null), reads
/// it to the end (5 s at most) and reaps the child.
private func spawnAndRead(_ argv: [String]) throws -> String {
    var pipe: [Int32] = [-1, -1]
    guard tether_pipe(&pipe) == 0 else { throw SpawnFailure(description: "pipe: errno \(errno)") }
    let strings: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for string in strings { free(string) } }
    var pid: Int32 = 0, pidfd: Int32 = -1
    let result = strings.withUnsafeBufferPointer { arguments -> Int32 in
        var request = tether_spawn_request()
        request.path = UnsafePointer(arguments[0])
        request.argv = UnsafePointer(arguments.baseAddress)
        request.stdio = (-1, pipe[1], -1)
        request.passed_descriptor = -1
        request.without_pidfd = 1
        request.cgroup_procs = -1
        request.confinement.landlock_ruleset = -1
        return tether_spawn(&request, &pid, &pidfd)
    }
    close(pipe[1])
    defer { close(pipe[0]) }
    guard result == 0 else { throw SpawnFailure(description: "spawn: errno \(-result)") }
    defer { var status: Int32 = 0; while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    // Bounded by reads: the outputs here are a few hundred bytes.
    for _ in 0..<1_000 {
        var ready = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 5_000) > 0 else {
            throw SpawnFailure(description: "no end of the child's output within 5 s (\(bytes.count) bytes read)")
        }
        let count = chunk.withUnsafeMutableBytes { read(pipe[0], $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return String(decoding: bytes, as: UTF8.self) }
        bytes += chunk.prefix(count)
    }
    throw SpawnFailure(description: "the child's output did not end after 1,000 reads")
}
