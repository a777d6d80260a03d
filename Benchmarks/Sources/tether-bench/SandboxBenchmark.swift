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
        if case .success(let cgroups) = DelegatedCgroup.claim(group: group) {
            let inCgroup = try measure(samples: samples, warmup: 10) {
                try launch(group: group, confined: true, cgroups: cgroups)
            }
            results.append(BenchResult(name: "launch.cgroup", samples: inCgroup,
                                       baselines: ["the same confined launch without a cgroup": Percentiles(nanoseconds: confined)]))
        }
        return results
    }

    private func launch(group: String, confined: Bool, cgroups: DelegatedCgroup? = nil) throws {
        var confinement: Confinement?
        var temporary: String?
        if confined {
            let made = try? PrivateTemporaryDirectory.make(in: group + "/tmp", prefix: "bench")
            temporary = made
            let cgroup = try cgroups.map { cgroups throws(Errno) in
                try cgroups.makeChild(name: "bench", memoryLimitBytes: 96 << 20, tasksLimit: 512)
            }
            var policy = SandboxPolicy(role: .keyboard, openAccess: false, group: group, temporaryDirectory: made,
                                       memoryLimitMiB: 96)
            // As the host confines it: the group's secrets out of its reach.
            policy.secrets = GroupDirectory.secretsPath(of: group)
            confinement = Confinement(policy: policy, cgroup: cgroup)
        }
        defer {
            if let cgroup = confinement?.cgroup {
                cgroup.closeProcs()
                _ = cgroup.remove()
            }
        }
        defer { if let temporary { try? PrivateTemporaryDirectory.remove(temporary) } }
        let spawned = try spawnTrue(confinement?.spawnConfinement)
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
