import CBenchSystem
import CTetherSystem
import TetherIPC
import TetherLoop
import SystemPackage
import TetherGroup
import TetherSandbox
import Glibc

/// What confinement adds to a launch: `launch.confined` spawns `/bin/true`
/// as the host launches an extension (a session, the parent-death signal,
/// the descriptor limit) and waits for it, with everything the sandbox adds
/// per launch (a private TMPDIR made and removed, the Landlock ruleset, the
/// offline keyboard's seccomp filter, RLIMIT_DATA); its baseline is the same
/// launch unconfined, in the same run. The goal: under 1 ms more.
///
/// `sandbox.syscall` is what the allowlist costs each system call of a
/// confined extension (the offline keyboard's filter, the largest, on
/// `getppid` and an argument-filtered `fcntl`), against the same calls
/// without a filter.
///
/// `launch.world` is the confined launch in a world of its own (user, mount,
/// PID, IPC, cgroup and network namespaces, its root built and entered
/// by chroot), against the confined launch in the machine's.
///
/// Run in a delegated cgroup (systemd's `Delegate=yes`), it also measures
/// `launch.cgroup`: the confined launch in a cgroup of its own (made, joined
/// by the child, removed), against the confined launch without.
struct SandboxBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        let group = scratch.path + "/sandbox-group"
        if mkdir(group, 0o700) != 0, errno != EEXIST { throw BenchError.environment("cannot make \(group)") }
        let samples = max(20, Int(200 * scale))
        let unconfined = try measure(samples: samples, warmup: 10) { try launch(group: group, confined: false) }
        let confined = try measure(samples: samples, warmup: 10) { try launch(group: group, confined: true) }
        var results = [BenchResult(name: "launch.confined", samples: confined,
                                   baselines: ["the same launch unconfined": Percentiles(nanoseconds: unconfined)])]
        // Its own world (the host makes it once per extension and keeps it),
        // its /etc copied as the host copies it; and with each file bound.
        let policy = SandboxPolicy(role: .keyboard, openAccess: false, group: group, temporaryDirectory: nil, memoryLimitMiB: 96)
        let configuration = try? WorldConfiguration(parent: scratch.path)
        _ = try? configuration?.refresh()
        if ExtensionWorld.unavailable == nil, let configuration,
           let world = try? ExtensionWorld.make(policy: policy, executable: "/bin/true", arguments: [], bundle: nil,
                                                diskLimitMiB: 256, configuration: configuration),
           let bound = try? ExtensionWorld.make(policy: policy, executable: "/bin/true", arguments: [], bundle: nil,
                                                diskLimitMiB: 256) {
            let inWorld = try measure(samples: samples, warmup: 10) { try launch(group: group, confined: true, world: world) }
            let eachBound = try measure(samples: samples, warmup: 10) { try launch(group: group, confined: true, world: bound) }
            results.append(BenchResult(name: "launch.world", samples: inWorld,
                                       baselines: ["the same confined launch in the machine's world": Percentiles(nanoseconds: confined),
                                                   "the same world, each /etc file bound": Percentiles(nanoseconds: eachBound)]))
        }
        results.append(try syscallCost(samples: samples))
        if case .success(let cgroups) = DelegatedCgroup.claim(group: group) {
            let inCgroup = try measure(samples: samples, warmup: 10) {
                try launch(group: group, confined: true, cgroups: cgroups)
            }
            results.append(BenchResult(name: "launch.cgroup", samples: inCgroup,
                                       baselines: ["the same confined launch without a cgroup": Percentiles(nanoseconds: confined)]))
        }
        return results
    }

    private func syscallCost(samples: Int) throws -> BenchResult {
        func run(_ filter: [UInt8]?) throws -> Percentiles {
            var perCall = [Double](repeating: 0, count: samples)
            let rc = perCall.withUnsafeMutableBufferPointer { out in
                guard let filter else { return bench_syscalls_under_filter(nil, 0, Int32(samples), 10_000, out.baseAddress) }
                return filter.withUnsafeBytes {
                    bench_syscalls_under_filter($0.baseAddress, UInt16(truncatingIfNeeded: $0.count / 8), Int32(samples),
                                                10_000, out.baseAddress)
                }
            }
            guard rc == 0 else { throw BenchError.environment("the system call loop failed (errno \(errno))") }
            let sorted = perCall.sorted()
            return Percentiles(p50: sorted[sorted.count / 2], p99: sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
        }
        guard let filter = SeccompFilter.program(network: false, readOnly: true, sharedMemory: false) else {
            throw BenchError.environment("libseccomp could not build the keyboard's filter")
        }
        let bare = try run(nil)
        let filtered = try run(filter)
        return BenchResult(name: "sandbox.syscall", unit: "ns", p50: filtered.p50, p99: filtered.p99, samples: samples,
                           baselines: ["the same calls without a filter": bare])
    }

    private func launch(group: String, confined: Bool, cgroups: DelegatedCgroup? = nil, world: SpawnWorld? = nil) throws {
        var confinement: Confinement?
        var temporary: String?
        if confined {
            // In a world, as the host launches it: no TMPDIR of the host's.
            let made = world != nil ? nil : try? PrivateTemporaryDirectory.make(in: group + "/tmp", prefix: "bench")
            temporary = made
            let cgroup = try cgroups.map { cgroups throws(Errno) in
                try cgroups.makeChild(name: "bench", memoryLimitBytes: 96 << 20, tasksLimit: 512)
            }
            var policy = SandboxPolicy(role: .keyboard, openAccess: false, group: group, temporaryDirectory: made,
                                       memoryLimitMiB: 96)
            // As the host confines it: the group's secrets out of its reach.
            policy.secrets = GroupDirectory.secretsPath(of: group)
            confinement = Confinement(policy: policy, cgroup: cgroup, world: world != nil)
        }
        defer {
            if let cgroup = confinement?.cgroup {
                cgroup.closeProcs()
                _ = cgroup.remove()
            }
        }
        defer { if let temporary { try? PrivateTemporaryDirectory.remove(temporary) } }
        var spawnConfinement = confinement?.spawnConfinement
        spawnConfinement?.world = world
        let spawned = try spawnTrue(spawnConfinement)
        var status: Int32 = 0
        while waitpid(spawned.pid, &status, 0) < 0 && errno == EINTR {}
        close(spawned.pidfd)
        guard status == 0 else { throw BenchError.environment("/bin/true exited with status \(status)") }
        withExtendedLifetime(confinement) {}
    }

    private func spawnTrue(_ confinement: SpawnConfinement?) throws -> (pid: Int32, pidfd: Int32) {
        var pid: Int32 = 0
        var pidfd: Int32 = -1
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        let rc: Int32 = argv.withUnsafeBufferPointer { arguments in
            "/bin/true".withCString { path in
                var request = tether_spawn_request()
                request.path = path
                request.argv = arguments.baseAddress
                request.stdio = (-1, -1, -1)
                request.new_session = 1
                request.parent_death_signal = SIGTERM
                request.descriptor_soft_limit = 1024
                return SpawnConfinement.spawn(&request, confinement: confinement, pid: &pid, pidfd: &pidfd)
            }
        }
        guard rc == 0 else { throw BenchError.environment("cannot spawn /bin/true: errno \(-rc)") }
        return (pid, pidfd)
    }
}
