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

/// Runs one extension: spawns it in a process group of its own, logs its
/// output under its name (at a bounded rate), restarts it by its manifest's
/// policy with backoff, and stops it, with everything it started.
///
/// An on-demand extension rests `idle` until work for it arrives
/// (`demand()`), and is ended again once it has had no work for its idle
/// timeout: the host tells it (`extension.willTerminate`), then SIGTERM,
/// then SIGKILL after the grace. Ending it so is no failure and counts no
/// restart. It is never restarted by itself either: the next demand
/// launches it, as iOS launches an extension for the next request.
///
/// While its process runs, the host holds the extension's instance lock, so
/// no second copy starts anywhere. If someone else holds it (the extension
/// was started by hand), the supervisor waits for that instance to end.
final class ExtensionSupervisor {
    enum State: String {
        case idle, starting, running, waiting, external, stopping, stopped, failed
    }

    let manifest: ExtensionManifest
    private let loop: EventLoop
    private let lockPath: String
    private let environment: [String]
    /// Ends the group if the host dies (PDEATHSIG reaches the main process only).
    private let reaper: GroupReaper
    /// Its confinement and private temporary directory, per launch.
    private let sandbox: ExtensionSandbox
    /// What confines it (the running instance's, else what would).
    private(set) var sandboxReport: SandboxReport
    /// The running instance's TMPDIR, removed once its group is gone.
    private var temporaryDirectory: String?
    /// The running instance's cgroup (where the host has a delegated one):
    /// everything it started, whatever session or group it moved to.
    private var cgroup: ExtensionCgroup?
    private let graceMilliseconds: UInt64
    private let logger: Logger
    private let metrics: HostMetrics
    private(set) var state: State = .stopped
    private(set) var restarts = 0
    /// Output lines dropped by the rate limit since the host started.
    private(set) var droppedLines = 0
    private(set) var lastExit: ExtensionExit?
    /// Why the host is ending the running process, if it is.
    private var ending: ExtensionExit.Reason?
    /// Asked for while it was being ended: launch again once it is gone.
    private var relaunchAfterExit = false
    /// Requests in flight to or for it (on-demand: none for the idle timeout ends it).
    private var work = 0
    private var idleTimer: LoopTimer?
    private var termTimer: LoopTimer?
    /// The host's part of an idle end: the notice on the extension's connection.
    var onWillTerminate: (() -> Void)?
    /// After every exit, and when it fails: whatever waits for its hello
    /// gets its answer (unless it is about to be launched again).
    var onGone: ((_ relaunching: Bool) -> Void)?
    /// Whether work waits for its hello.
    var hasWaiters: (() -> Bool)?
    /// Each launch's link (`LaunchLink`): the host's end, and the pid the
    /// other end went to. Without a taker the end is closed.
    var onLink: ((_ descriptor: Int32, _ pid: Int32) -> Void)?
    private var process: ChildProcess?
    /// The process group of the running instance: its pid (it leads a session).
    private var group: Int32 = 0
    /// Groups of ended launches still being cleared (`endLeftovers`): still
    /// its own until they are, and stops wait for them.
    private var leftoverGroups: Set<Int32> = []
    private var leftoversPending = 0
    private var afterLeftovers: [() -> Void] = []
    private var instanceLock: LivenessLock?
    private var startedAt: UInt64 = 0
    private var backoff = RestartBackoff()
    /// Spawn failures for want of a resource (descriptors, processes,
    /// memory) are retried on this schedule, never marked failed.
    private var resourceBackoff = RetryDelay()
    private var restartTimer: LoopTimer?
    private var externalWatcher: LockWatcher?
    /// Everyone waiting for the current stop (the host's shutdown, `extension stop`).
    private var stopping: [() -> Void] = []
    private var killTimer: LoopTimer?
    private var throttle: OutputThrottle
    private var pausedStreams: [PipeStream] = []
    private var resumeTimer: LoopTimer?
    private var droppedSinceReport = 0
    private var lastDropReport: UInt64 = 0

    init(manifest: ExtensionManifest, loop: EventLoop, lockPath: String, environment: [String],
         reaper: GroupReaper, sandbox: ExtensionSandbox, graceMilliseconds: UInt64, logger: Logger,
         metrics: HostMetrics) {
        self.manifest = manifest
        self.metrics = metrics
        metrics.register(extension: manifest.name)
        self.sandbox = sandbox
        sandboxReport = sandbox.expectedReport(for: manifest)
        self.graceMilliseconds = graceMilliseconds
        self.loop = loop
        self.lockPath = lockPath
        self.environment = environment
        self.reaper = reaper
        var logger = logger
        logger[metadataKey: "extension"] = .string(manifest.name)
        self.logger = logger
        throttle = OutputThrottle(now: loop.now)
    }

    var pid: Int32? { state == .running ? process?.pid : nil }

    var statusJSON: JSONValue {
        [
            "name": .string(manifest.name), "role": .string(manifest.role.rawValue),
            "pid": pid.map { .integer($0) } ?? .null, "state": .string(state.rawValue),
            "restarts": .integer(restarts), "droppedLines": .integer(droppedLines),
            "activation": .string(manifest.activation.rawValue), "lastExit": lastExit?.json ?? .null,
            "sandbox": sandboxReport.json,
        ]
    }

    var isOnDemand: Bool { manifest.activation == .onDemand }

    /// Its process is alive (running, or on its way out).
    var hasProcess: Bool { process.map { $0.exitStatus == nil } ?? false }

    /// Being ended: work for it waits for the next instance (`demand()` relaunches).
    var isEnding: Bool { state == .stopping }

    /// The host has it in hand (launching, running, ending, or about to
    /// restart): no one else may attach under its name.
    var isLaunched: Bool { [.starting, .running, .waiting, .stopping].contains(state) || leftoversPending > 0 }

    /// `pid` is its process or anything it started (its process group):
    /// a wrapper script's child saying hello is still the host's own.
    func owns(pid: Int32) -> Bool {
        if leftoverGroups.contains(where: { pid == $0 || getpgid(pid) == $0 }) { return true }
        guard hasProcess, group > 0 else { return false }
        // Its session too: a child that moved to a group of its own stays
        // in it. Its cgroup even holds what left the session.
        return pid == group || getpgid(pid) == group || getsid(pid) == group || cgroup?.contains(pid: pid) == true
    }

    /// Where the host puts it when it starts: running, or idle until asked.
    func begin() {
        // Work that arrived first (`extension start`) has launched it already.
        guard state == .stopped else { return }
        if isOnDemand {
            state = .idle
        } else {
            start()
        }
    }

    /// Work for it arrived (a push, a reload, `extension start`): launch it
    /// unless it runs or is on its way. A failed or stopped extension is
    /// started afresh only when `explicitly` asked (`tether extension start`).
    /// False if it will not run.
    @discardableResult
    func demand(explicitly: Bool = false) -> Bool {
        switch state {
        case .running, .starting, .external:
            return true
        case .stopping:
            // On its way out for idleness: let it go, then launch anew.
            if ending == .idle || explicitly { relaunchAfterExit = true }
            return relaunchAfterExit
        case .waiting:
            if explicitly { restartTimer?.close(); restartTimer = nil; start() }
            return true
        case .idle:
            start()
            return state != .failed
        case .stopped, .failed:
            guard explicitly else { return false }
            backoff = RestartBackoff()
            start()
            return state != .failed
        }
    }

    /// A request began (`true`) or ended (`false`); the idle clock restarts.
    func noteWork(began: Bool) {
        work = began ? work + 1 : max(0, work - 1)
        armIdleTimer()
    }

    /// Something happened on its connection: the idle clock restarts.
    func noteActivity() { armIdleTimer() }

    private func armIdleTimer() {
        guard isOnDemand, state == .running, ending == nil else { return }
        let timer = idleTimer ?? LoopTimer(loop: loop)
        idleTimer = timer
        timer.start(afterMilliseconds: manifest.idleTimeoutMilliseconds) { [unowned self] in
            guard self.work == 0 else { return }  // the end of that work re-arms it
            // Work waiting for a hello (a second instance's, after a relaunch) is work too.
            if self.hasWaiters?() == true { return self.armIdleTimer() }
            self.endIdle()
        }
    }

    /// Its idle timeout passed with nothing in flight: the notice, SIGTERM
    /// a second later (or at once when it is already gone), SIGKILL after the grace.
    private func endIdle() {
        guard let process, process.exitStatus == nil, ending == nil else { return }
        ending = .idle
        state = .stopping
        logger.info("extension '\(manifest.name)' is idle (nothing for \(manifest.idleTimeoutMilliseconds / 1000) s); ending it")
        onWillTerminate?()
        let term = LoopTimer(loop: loop)
        termTimer = term
        term.start(afterMilliseconds: min(1_000, graceMilliseconds)) { [unowned self] in
            self.signal(SIGTERM)
            let kill = LoopTimer(loop: self.loop)
            self.killTimer = kill
            kill.start(afterMilliseconds: self.graceMilliseconds) { [weak self] in self?.signal(SIGKILL) }
        }
    }

    /// The watchdog's verdict: SIGKILL to the whole group now; the exit is
    /// recorded as unresponsive and handled by the restart policy.
    func killUnresponsive() {
        guard let process, process.exitStatus == nil, ending == nil || ending == .idle else { return }
        ending = .unresponsive
        signal(SIGKILL)
    }

    func start() {
        guard stopping.isEmpty else { return }
        let lock: LivenessLock?
        do {
            lock = try LivenessLock.tryAcquire(path: lockPath, label: "extension \(manifest.name)")
        } catch {
            if case .system(_, _, let errno) = error, Self.isResourceShortage(errno) {
                return retryLater("cannot take its instance lock: \(error)")
            }
            return failNow("cannot take its instance lock: \(error)")
        }
        guard let lock else { return waitForExternalInstance() }
        instanceLock = lock
        if let note = lock.displacementNote { logger.warning("\(note)") }
        spawn()
    }

    /// An instance started by hand holds the lock: run ours once it is gone.
    private func waitForExternalInstance() {
        state = .external
        logger.info("extension '\(manifest.name)' is already running outside the host; waiting for it to end")
        do {
            externalWatcher = try LockWatcher(loop: loop, path: lockPath) { [unowned self] status in
                guard !status.running else { return }
                self.externalWatcher?.close()
                self.externalWatcher = nil
                if self.isOnDemand && !self.relaunchAfterExit {
                    // Its work went to the other instance; rest until asked.
                    self.state = .idle
                    self.onGone?(false)
                } else {
                    self.relaunchAfterExit = false
                    self.start()
                }
            }
        } catch {
            failNow("cannot watch its instance lock: \(error)")
        }
    }

    private func spawn() {
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
            resourceBackoff = RetryDelay()
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
    private func retryLater(_ reason: String) {
        let delay = resourceBackoff.next()
        state = .waiting
        logger.warning("extension '\(manifest.name)' \(reason); retrying in \(delay) ms")
        scheduleStart(after: delay, countsAsRestart: false)
    }

    // MARK: - Output

    private func forward(_ stream: PipeStream?, stream name: String, level: Logger.Level) {
        guard let stream else { return }
        var splitter = LineSplitter()
        let metadata: Logger.Metadata = ["origin": "output", "stream": .string(name)]
        try? stream.startReading { [unowned self] event in
            switch event {
            case .data(let bytes):
                throttle.refill(now: loop.now)
                for line in splitter.append(bytes, admit: { self.throttle.admit(byteCount: $0) }) {
                    self.log(line, level: level, metadata: metadata)
                }
                // Any refused line means the bucket ran dry for this
                // extension's lines: stop reading until it refills.
                let refused = splitter.dropped > 0
                if refused {
                    metrics.droppedLines(manifest.name, splitter.dropped)
                    droppedLines += splitter.dropped
                    droppedSinceReport += splitter.dropped
                    splitter.dropped = 0
                }
                if refused || throttle.isEmpty { pause(stream) }
            case .end, .failed:
                if let rest = splitter.flush() { self.log(rest, level: level, metadata: metadata) }
                pausedStreams.removeAll { $0 === stream }
                stream.close()
            }
        }
    }

    /// One line of its output: a JSON record (`level`, `message`, fields)
    /// at its own level with its fields, any other line as it is.
    private func log(_ line: String, level: Logger.Level, metadata: Logger.Metadata) {
        guard let record = LogRecordLine(line) else {
            return logger.log(level: level, "\(line)", metadata: metadata)
        }
        logger.log(level: record.level, "\(record.message)", metadata: record.metadata.merging(metadata) { $1 })
    }

    /// Over its rate: stop reading until the bucket refills. Its pipe fills
    /// and its writes wait; the host spends nothing on it meanwhile.
    private func pause(_ stream: PipeStream) {
        stream.stopReading()
        if !pausedStreams.contains(where: { $0 === stream }) { pausedStreams.append(stream) }
        let timer = resumeTimer ?? LoopTimer(loop: loop)
        resumeTimer = timer
        guard !timer.isActive else { return }
        timer.start(afterMilliseconds: OutputThrottle.pauseMilliseconds) { [unowned self] in self.resume() }
    }

    private func resume() {
        if droppedSinceReport > 0, lastDropReport == 0 || loop.now - lastDropReport >= 5_000 {
            lastDropReport = loop.now
            let limit = "\(Int(OutputThrottle.linesPerSecond)) lines or \(Int(OutputThrottle.bytesPerSecond) / 1024) KiB"
            logger.warning("extension '\(manifest.name)': \(droppedSinceReport) output lines dropped (it printed more than \(limit) a second)")
            droppedSinceReport = 0
        }
        let streams = pausedStreams
        pausedStreams.removeAll()
        for stream in streams where !stream.isClosed {
            // The reader set up in forward() is still in place: resume it.
            try? stream.resumeReading()
        }
    }

    // MARK: - Exit and restart

    private func exited(_ status: TerminationStatus) {
        let ranFor = loop.now - startedAt
        process?.close()
        process = nil
        // The kernel says when its cgroup's memory limit killed it (else
        // the exit is as it happened, with the limit in force beside it).
        let killedForMemory = ending == nil && (cgroup?.memoryKills ?? 0) > 0
        let exit = ExtensionExit(status: status, intended: killedForMemory ? .memory : ending,
                                 memoryLimitMiB: sandboxReport.memoryLimitMiB)
        lastExit = exit
        metrics.extensionExited(manifest.name, reason: exit.reason.rawValue)
        var exitMetadata: Logger.Metadata = ["reason": .string(exit.reason.rawValue), "ranForMs": .number(ranFor),
                                             "restarts": .number(restarts)]
        switch status {
        case .exited(let code): exitMetadata["code"] = .number(code)
        case .signaled(let signal): exitMetadata["signal"] = .number(signal)
        }
        // Told once, by the branch below that knows what comes next.
        let why = exit.reason == .exited || exit.reason == .crashed ? "" : " (\(exit.reason.rawValue))"
        let tell = { [logger, manifest] (message: String?) in
            logger.event(.extensionExited, message ?? "extension '\(manifest.name)' \(status)\(why)", exitMetadata)
        }
        ending = nil
        work = 0
        idleTimer?.close()
        idleTimer = nil
        termTimer?.close()
        termTimer = nil
        // Whatever the extension left running in its group goes with it:
        // SIGTERM now, SIGKILL after the grace. A restart starts from
        // nothing, and a stop returns once nothing of it is left.
        let completions = stopping
        stopping.removeAll()
        endLeftovers(whenGone: completions.isEmpty ? nil : { for completion in completions { completion() } })
        releaseInstance()
        killTimer?.close()
        killTimer = nil
        if !completions.isEmpty {
            tell(nil)
            state = isOnDemand ? .idle : .stopped
            // Waiters hear first: the last completion may close the host's socket.
            return relaunchIfAsked()
        }
        if exit.reason == .idle {
            tell("extension '\(manifest.name)' ended (idle)")
            state = .idle
            backoff = RestartBackoff()  // it ran and did its work
            return relaunchIfAsked()
        }
        if case .exited(let code) = status, manifest.noRestartExitCodes.contains(code) {
            tell(nil)
            fail("it exited with status \(code), which its manifest lists in noRestartExitCodes; not restarting it")
            return relaunchIfAsked()
        }
        if isOnDemand {
            tell(nil)
            // Launched for work; the next work launches it again. A crash
            // loop still marks it failed.
            if status == .exited(0) { backoff = RestartBackoff() }  // it ran and ended well
            if status != .exited(0), backoff.delayAfterFailure(ranFor: ranFor) == nil {
                fail("\(status) \(RestartBackoff.crashLoopLimit) times in a row, each within "
                     + "\(RestartBackoff.stableAfter / 1000) s of starting; not launching it again")
                return relaunchIfAsked()
            }
            state = .idle
            return relaunchIfAsked()
        }
        let wantsRestart = switch manifest.restart {
        case .always: true
        case .onFailure: status != .exited(0)
        case .never: false
        }
        guard wantsRestart else {
            tell(nil)
            state = .stopped
            return relaunchIfAsked()
        }
        guard let delay = backoff.delayAfterFailure(ranFor: ranFor) else {
            tell(nil)
            fail("\(status) \(RestartBackoff.crashLoopLimit) times in a row, each within "
                 + "\(RestartBackoff.stableAfter / 1000) s of starting; not restarting it")
            return relaunchIfAsked()
        }
        state = .waiting
        tell("extension '\(manifest.name)' \(status)\(why); restarting in \(delay) ms")
        onGone?(true)
        scheduleStart(after: delay, countsAsRestart: true)
    }

    /// After an exit: launch again if work arrived while it was ending;
    /// else whatever waits for its hello hears that it will not come.
    private func relaunchIfAsked() {
        let again = relaunchAfterExit && state != .failed
        relaunchAfterExit = false
        onGone?(again)
        if again { start() }
    }

    private func scheduleStart(after delay: UInt64, countsAsRestart: Bool) {
        let timer = restartTimer ?? LoopTimer(loop: loop)
        restartTimer = timer
        timer.start(afterMilliseconds: delay) { [unowned self] in
            if countsAsRestart {
                self.restarts += 1
                self.metrics.extensionRestarted(self.manifest.name)
                self.logger.event(.extensionRestarted, "extension '\(self.manifest.name)' restarting (restart \(self.restarts))",
                                  ["restarts": .number(self.restarts)])
            }
            self.start()
        }
    }

    /// The whole group, which holds the main process too; without a group
    /// (never spawned as one), the main process alone. Its cgroup's
    /// processes too: SIGKILL by `cgroup.kill`, the whole tree at once.
    private func signal(_ signal: Int32) {
        if group > 0 {
            _ = kill(-group, signal)
        } else {
            try? process?.signal(signal)
        }
        if signal == SIGKILL { cgroup?.kill() } else { cgroup?.signalAll(signal) }
    }

    /// The main process is gone; its group may not be. The group's id stays
    /// reserved while any member lives, so signals reach only the leftovers
    /// (seccomp keeps a confined launch's processes in it). SIGTERM now,
    /// SIGKILL after the grace; with a cgroup, leftovers that left the group
    /// too. Once none is left (checked every 20 ms, the host reaping those
    /// it adopted), or a moment after the SIGKILL if one cannot die
    /// (uninterruptible sleep), the cgroup is removed, then the TMPDIR, and
    /// then `whenGone` runs.
    private func endLeftovers(whenGone: (() -> Void)? = nil) {
        let leftovers = group
        group = 0
        let cgroup = self.cgroup
        self.cgroup = nil
        // Its TMPDIR goes once nothing of it can write there any more.
        let temporary = temporaryDirectory
        temporaryDirectory = nil
        leftoversPending += 1
        if leftovers > 0 { leftoverGroups.insert(leftovers) }
        let gone = { [weak self] in
            if let self {
                self.leftoverGroups.remove(leftovers)
                self.leftoversPending -= 1
                if self.leftoversPending == 0 {
                    let waiting = self.afterLeftovers
                    self.afterLeftovers.removeAll()
                    for then in waiting { then() }
                }
            }
            whenGone?()
        }
        let finish = { [sandbox, reaper] in
            reaper.releaseGroup(leftovers)
            // A cgroup that cannot be removed keeps its TMPDIR for the next start.
            let removeTemporary = { (removed: Bool) in
                guard removed, let temporary else { return gone() }
                sandbox.removeTemporaryDirectory(temporary, then: gone)
            }
            guard let cgroup else { return removeTemporary(true) }
            sandbox.retire(cgroup, then: removeTemporary)
        }
        func alive() -> Bool {
            guard leftovers > 0 else { return cgroup?.isPopulated == true }
            _ = tether_reap_group(leftovers)
            return kill(-leftovers, 0) == 0 || cgroup?.isPopulated == true
        }
        if leftovers > 0 { _ = kill(-leftovers, SIGTERM) }
        cgroup?.signalAll(SIGTERM)
        guard alive() else { return finish() }
        let started = loop.now
        var killed = false
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 20, repeatMilliseconds: 20) { [loop, graceMilliseconds] in
            let waited = loop.now - started
            let stillAlive = alive()
            if stillAlive, !killed, waited >= graceMilliseconds {
                if leftovers > 0 { _ = kill(-leftovers, SIGKILL) }
                cgroup?.kill()
                killed = true
                return
            }
            guard !stillAlive || waited >= graceMilliseconds + 2_000 else { return }
            timer.close()
            finish()
        }
    }

    private func fail(_ reason: String) {
        state = .failed
        var metadata: Logger.Metadata = ["reason": .string(reason), "restarts": .number(restarts)]
        if let lastExit { metadata["lastExit"] = .string(lastExit.reason.rawValue) }
        logger.event(.extensionFailed, level: .error, "extension '\(manifest.name)' failed: \(reason)", metadata)
    }

    /// A failure outside an exit (the lock, the spawn): waiters hear now.
    private func failNow(_ reason: String) {
        fail(reason)
        onGone?(false)
    }

    private func releaseInstance() {
        instanceLock?.release()
        instanceLock = nil
    }

    /// SIGTERM to its whole process group, then SIGKILL after the grace;
    /// `completion` once it is gone.
    func stop(completion: @escaping () -> Void) {
        restartTimer?.close()
        restartTimer = nil
        externalWatcher?.close()
        externalWatcher = nil
        // Paused output would keep a dying extension blocked on its pipe, and
        // a paused pipe must still be read to its end.
        resumeTimer?.close()
        resumeTimer = nil
        resume()
        idleTimer?.close()
        idleTimer = nil
        termTimer?.close()
        termTimer = nil
        relaunchAfterExit = false
        guard let process, process.exitStatus == nil else {
            if state != .failed { state = isOnDemand ? .idle : .stopped }
            onGone?(false)
            // An ended launch still being cleared: answered once it is.
            guard leftoversPending == 0 else { return afterLeftovers.append(completion) }
            return completion()
        }
        stopping.append(completion)
        // Already on its way out for a stop: wait with the others.
        guard stopping.count == 1 || ending != .stopped else { return }
        killTimer?.close()
        killTimer = nil
        ending = .stopped
        state = .stopping
        signal(SIGTERM)
        let timer = LoopTimer(loop: loop)
        killTimer = timer
        timer.start(afterMilliseconds: graceMilliseconds) { [weak self] in self?.signal(SIGKILL) }
    }
}

/// RestartBackoff's schedule (100 ms doubling to 30 s) without the crash-loop
/// limit: for waits on the environment, which are not the extension's fault.
struct RetryDelay {
    private var upcoming = RestartBackoff.firstDelay

    mutating func next() -> UInt64 {
        defer { upcoming = min(RestartBackoff.maximumDelay, upcoming * 2) }
        return upcoming
    }
}
