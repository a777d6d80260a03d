import CTetherSystem
import Glibc
import Logging
import TetherGroup
import TetherIPC
import SystemPackage
import TetherLog
import TetherLoop
import TetherManifest
import TetherSandbox

/// Spawning a launch: confined, in a process group (and cgroup) of its
/// own, holding the instance lock; a resource shortage is retried, not failed.
extension ExtensionSupervisor {
    /// Takes a slot and the instance lock and spawns a launch; the
    /// outcome, for the lifecycle. No slot is a shortage: retried later.
    func launch() -> Lifecycle.Event {
        guard resources.slots.take() else { return .launchFailed(.shortage(resources.slots.refusal)) }
        let event = lockAndSpawn()
        if case .launched = event {} else { resources.slots.give() }
        return event
    }

    private func lockAndSpawn() -> Lifecycle.Event {
        let lock: LivenessLock?
        do {
            lock = try LivenessLock.tryAcquire(path: lockPath, label: "extension \(manifest.name)")
        } catch {
            if case .system(_, _, let errno) = error, Self.isResourceShortage(errno) {
                return .launchFailed(.shortage("cannot take its instance lock: \(error)"))
            }
            return .launchFailed(.broken("cannot take its instance lock: \(error)"))
        }
        guard let lock else { return .heldElsewhere }
        if let note = lock.displacementNote { logger.warning("\(note)") }
        return spawn(holding: lock)
    }

    private func spawn(holding lock: LivenessLock) -> Lifecycle.Event {
        // A session of its own: one signal to the group reaches everything
        // the extension started, and a terminal's Ctrl-C reaches the host only.
        // SIGTERM from the kernel when the host dies, even by kill -9 (the
        // loop thread spawns, and it lives as long as the host). The host
        // raised its own descriptor limit; the extension gets the usual one.
        // All of it is set between fork and exec, in C: no launcher exec.
        // Confined by its role (files, network, signals, memory), in a
        // world of its own where the machine allows (else with a private
        // TMPDIR): applied in the same child, last before exec.
        var world: SpawnWorld?
        do throws(SandboxRefusal) {
            world = try resources.sandbox.world(for: manifest)
        } catch {
            lock.release()
            return preparationFailed(error)
        }
        let link: (host: Int32, child: Int32)
        do {
            link = try LaunchLink.pair()
        } catch {
            lock.release()
            return Self.failure("cannot make its link", error)
        }
        while true {
            let confinement: Confinement
            let temporary: String?
            do {
                (confinement, temporary) = try resources.sandbox.prepare(manifest, world: world != nil)
            } catch {
                close(link.host)
                close(link.child)
                lock.release()
                return preparationFailed(error)
            }
            sandboxReport = confinement.report
            sandboxReport.world = world != nil
            // In its own world, its TMPDIR is its own tmpfs, and it starts there.
            var options = ProcessOptions(executable: manifest.executable, arguments: manifest.arguments,
                                         environment: environment + ["TMPDIR=\(world?.temporaryDirectory ?? temporary ?? "/tmp")"],
                                         stdin: .ignore, stdout: .pipe, stderr: .pipe, detached: true,
                                         // Its namespace's init is spared a SIGTERM it has no handler for.
                                         parentDeathSignal: world == nil ? SIGTERM : SIGKILL,
                                         descriptorSoftLimit: DescriptorLimit.childSoftLimit,
                                         confinement: confinement.spawnConfinement, passedDescriptor: link.child)
            options.confinement?.world = world
            if let world { options.workingDirectory = world.temporaryDirectory }
            let spawned: Result<ChildProcess, Errno>
            do throws(Errno) {
                spawned = .success(try ChildProcess.spawn(loop: resources.loop, options) { [unowned self] status in self.exited(status) })
            } catch {
                spawned = .failure(error)
            }
            // Owned the ruleset, which the child has applied by the time spawn
            // returns; the child's ends close before anything is cleared.
            withExtendedLifetime(confinement) {}
            confinement.cgroup?.closeProcs()
            switch spawned {
            case .success(let process):
                close(link.child)
                return launched(process, confinement: confinement, temporary: temporary, link: link.host,
                                lock: lock, ownWorld: world != nil)
            case .failure(let error):
                if let temporary { resources.sandbox.removeTemporaryDirectory(temporary) }
                if let unused = confinement.cgroup { resources.sandbox.retire(unused) }
                // Its world could not be made: again in the machine's (unless refused).
                if let failure = world?.failure {
                    world = nil
                    do throws(SandboxRefusal) {
                        try resources.sandbox.worldFailed(manifest, failure)
                        continue
                    } catch {}
                }
                close(link.host)
                close(link.child)
                lock.release()
                return Self.failure("cannot start \(manifest.executable)", error)
            }
        }
    }

    /// Why its confinement could not be prepared, for the lifecycle.
    private func preparationFailed(_ error: SandboxRefusal) -> Lifecycle.Event {
        if case .noTemporaryDirectory(let cause) = error, Self.isResourceShortage(cause) {
            return .launchFailed(.shortage("\(error)"))
        }
        if case .shortage = error { return .launchFailed(.shortage("\(error)")) }
        if case .missing = error {
            // As if it had exited with 3: it cannot run as configured here.
            lastExit = ExtensionExit(status: .exited(3), intended: nil, memoryLimitMiB: manifest.memoryLimitMiB)
        }
        return .launchFailed(.broken("\(error)"))
    }

    /// A spawned launch: its link handed to the host, its output forwarded.
    private func launched(_ process: ChildProcess, confinement: Confinement, temporary: String?, link: Int32,
                          lock: LivenessLock, ownWorld: Bool) -> Lifecycle.Event {
        if let onNotice { onNotice(.link(descriptor: link, pid: process.pid)) } else { close(link) }
        let launch = ExtensionLaunch(
            process: process, group: process.pid, cgroup: confinement.cgroup, temporaryDirectory: temporary,
            // In its own world the kernel counts its tmpfs.
            diskUsage: temporary.flatMap { temporary in
                resources.sandbox.watchDisk(temporary, limitMiB: manifest.diskLimitMiB) { [weak self, manifest] in
                    let limit = manifest.diskLimitMiB
                    self?.killForDisk("holds more than \(limit) MiB or \(ExtensionWorld.entries(forDiskLimitMiB: limit)) entries "
                                      + "in its temporary directory (its diskLimitMiB), or a directory there it cannot watch (not named in UTF-8, or unreadable)")
                }
            },
            instanceLock: lock, startedAt: resources.loop.now, ownWorld: ownWorld)
        resources.reaper.guardGroup(launch.group)
        resources.metrics.extensionLaunched(manifest.name)
        logger.event(.extensionStarted, "extension '\(manifest.name)' started (pid \(process.pid))",
                     ["pid": .number(process.pid), "role": .string(manifest.role.rawValue),
                      "restarts": .number(restarts)])
        // The idle clock starts at its hello (the host's noteActivity):
        // a slow start is not idleness.
        output.forward(process.stdout, stream: "stdout", level: .info)
        output.forward(process.stderr, stream: "stderr", level: .error)
        return .launched(launch)
    }

    /// A launch that failed for `error`: a shortage (retried) or broken.
    static func failure(_ reason: String, _ error: Errno) -> Lifecycle.Event {
        .launchFailed(isResourceShortage(error) ? .shortage("\(reason): \(error)") : .broken("\(reason): \(error)"))
    }

    static func isResourceShortage(_ error: Errno) -> Bool {
        [.tooManyOpenFiles, .tooManyOpenFilesInSystem, .resourceTemporarilyUnavailable, .noMemory,
         .noSpace].contains(error)
    }
}
