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
    func spawn() {
        state = .starting
        // A session of its own: one signal to the group reaches everything
        // the extension started, and a terminal's Ctrl-C reaches the host only.
        // SIGTERM from the kernel when the host dies, even by kill -9 (the
        // loop thread spawns, and it lives as long as the host). The host
        // raised its own descriptor limit; the extension gets the usual one.
        // All of it is set between fork and exec, in C: no launcher exec.
        // Confined by its role (files, network, signals, memory), with a
        // private TMPDIR: applied in the same child, last before exec.
        let confinement: Confinement
        let temporary: String
        do {
            (confinement, temporary) = try sandbox.prepare(manifest)
        } catch {
            releaseInstance()
            if case .noTemporaryDirectory(let cause) = error, Self.isResourceShortage(cause) {
                return retryLater("\(error)")
            }
            if case .missing = error {
                // As if it had exited with 3: it cannot run as configured here.
                lastExit = ExtensionExit(status: .exited(3), intended: nil, memoryLimitMiB: manifest.memoryLimitMiB)
            }
            return failNow("\(error)")
        }
        sandboxReport = confinement.report
        let link: (host: Int32, child: Int32)
        do {
            link = try LaunchLink.pair()
        } catch {
            releaseInstance()
            sandbox.removeTemporaryDirectory(temporary)
            if let unused = confinement.cgroup { sandbox.retire(unused) }
            return Self.isResourceShortage(error) ? retryLater("cannot make its link: \(error)")
                : failNow("cannot make its link: \(error)")
        }
        let options = ProcessOptions(executable: manifest.executable, arguments: manifest.arguments,
                                     environment: environment + ["TMPDIR=\(temporary)"], stdin: .ignore,
                                     stdout: .pipe, stderr: .pipe, detached: true, parentDeathSignal: SIGTERM,
                                     descriptorSoftLimit: DescriptorLimit.childSoftLimit,
                                     confinement: confinement.spawnConfinement, passedDescriptor: link.child)
        do throws(Errno) {
            // Owns the ruleset, which the child has applied by the time spawn returns.
            defer {
                withExtendedLifetime(confinement) {}
                confinement.cgroup?.closeProcs()
                close(link.child)
            }
            let process: ChildProcess
            do throws(Errno) {
                process = try ChildProcess.spawn(loop: loop, options) { [unowned self] status in self.exited(status) }
            } catch {
                close(link.host)
                throw error
            }
            if let onLink { onLink(link.host, process.pid) } else { close(link.host) }
            temporaryDirectory = temporary
            diskUsage = sandbox.watchDisk(temporary, limitMiB: manifest.diskLimitMiB) { [weak self] in self?.killForDisk() }
            cgroup = confinement.cgroup
            self.process = process
            group = process.pid
            reaper.guardGroup(group)
            startedAt = loop.now
            ending = nil
            state = .running
            metrics.extensionLaunched(manifest.name)
            logger.event(.extensionStarted, "extension '\(manifest.name)' started (pid \(process.pid))",
                         ["pid": .number(process.pid), "role": .string(manifest.role.rawValue),
                          "restarts": .number(restarts)])
            // The idle clock starts at its hello (the host's noteActivity):
            // a slow start is not idleness.
            resourceBackoff = CrashLoopDetector.schedule
            forward(process.stdout, stream: "stdout", level: .info)
            forward(process.stderr, stream: "stderr", level: .error)
        } catch {
            releaseInstance()
            sandbox.removeTemporaryDirectory(temporary)
            if let unused = confinement.cgroup { sandbox.retire(unused) }
            if Self.isResourceShortage(error) {
                return retryLater("cannot start \(manifest.executable): \(error)")
            }
            failNow("cannot start \(manifest.executable): \(error)")
        }
    }

    static func isResourceShortage(_ error: Errno) -> Bool {
        [.tooManyOpenFiles, .tooManyOpenFilesInSystem, .resourceTemporarilyUnavailable, .noMemory,
         .noSpace].contains(error)
    }

    /// A resource ran out (EMFILE, EAGAIN, ENOMEM): not the extension's fault,
    /// so it is not a failure. Try again later, on a backoff of its own.
    func retryLater(_ reason: String) {
        let delay = resourceBackoff.next()
        state = .waiting
        logger.warning("extension '\(manifest.name)' \(reason); retrying in \(delay) ms")
        scheduleStart(after: delay, countsAsRestart: false)
    }
}
