import CLibUV
import CTetherSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process, reaped and reported on the loop, so no zombie is left
/// behind. The child inherits no descriptor but its stdio (and a passed
/// one).
///
/// The one spawn in Tether: its own fork (`tether_spawn`, in C:
/// vfork-style, then every signal at its default, and whatever the options
/// ask for between fork and exec, which libuv's `uv_spawn` has no hook for:
/// a cgroup, a parent-death signal, a descriptor limit, confinement), its
/// end learnt through a pidfd (`uv_poll_t`, Linux 5.3+). `runInForeground`
/// is the same spawn for a command run without a loop.
package final class ChildProcess: LoopHandle, @unchecked Sendable {
    package private(set) var pid: Int32 = 0
    /// Readable once the child has ended; polled on the loop.
    private var pidfd: Int32 = -1
    package let stdin: PipeStream?
    package let stdout: PipeStream?
    package let stderr: PipeStream?
    package private(set) var exitStatus: TerminationStatus?
    private var onExit: ((TerminationStatus) -> Void)?

    /// Starts `options.executable`. Throws `Errno` (e.g. `.noSuchFileOrDirectory`
    /// for a missing executable) if the child could not be started.
    package static func spawn(
        loop: EventLoop,
        _ options: ProcessOptions,
        onExit: @escaping (TerminationStatus) -> Void
    ) throws(Errno) -> ChildProcess {
        let process = ChildProcess(loop: loop, options: options)
        process.onExit = onExit
        do {
            restoreChildSignal()
            try process.start(options)
        } catch {
            process.close()
            throw error
        }
        return process
    }

    /// Keeps the spawn's few low descriptor numbers now, while they are low
    /// (the first spawn would otherwise): a child then copies only the
    /// table below them, however many this process comes to hold.
    package static func reserveSpawnDescriptors() {
        tether_spawn_reserve_descriptors()
    }

    private init(loop: EventLoop, options: ProcessOptions) {
        stdin = options.stdin == .pipe ? PipeStream(loop: loop) : nil
        stdout = options.stdout == .pipe ? PipeStream(loop: loop) : nil
        stderr = options.stderr == .pipe ? PipeStream(loop: loop) : nil
        super.init(loop: loop)
    }

    /// An ignored SIGCHLD (or `SA_NOCLDWAIT`), which exec passes on, has the
    /// kernel reap our children unasked: their exit status would be lost.
    /// Set back to its default, as libuv's `uv_spawn` did; a handler someone
    /// installed is left alone.
    static func restoreChildSignal() {
        var current = sigaction()
        guard sigaction(SIGCHLD, nil, &current) == 0 else { return }
        // SIG_IGN is the handler value 1 (glibc); Swift cannot compare C function pointers.
        let ignored = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1
        guard ignored || current.sa_flags & SA_NOCLDWAIT != 0 else { return }
        var defaultAction = sigaction()
        defaultAction.__sigaction_handler.sa_handler = SIG_DFL
        sigaction(SIGCHLD, &defaultAction, nil)
    }

    /// The spawn (see `ownSpawn`), then a poll on the pidfd.
    private func start(_ options: ProcessOptions) throws(Errno) {
        // Our ends and the child's ends of each pipe; the child's are closed
        // here once it has them.
        var ours: [Int32] = [-1, -1, -1]
        var theirs: [Int32] = [-1, -1, -1]
        defer {
            for fd in theirs where fd > 2 { Glibc.close(fd) }
            for fd in ours where fd >= 0 { Glibc.close(fd) }
        }
        let modes = [options.stdin, options.stdout, options.stderr]
        for fd in 0..<3 {
            switch modes[fd] {
            case .inherit: theirs[fd] = Int32(fd)
            case .ignore: theirs[fd] = -1
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard tether_pipe(&ends) == 0 else { throw Errno(rawValue: errno) }
                // stdin: the child reads; stdout and stderr: the child writes.
                (ours[fd], theirs[fd]) = fd == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
            }
        }
        let (newPID, newPidfd) = try Self.ownSpawn(options, stdio: (theirs[0], theirs[1], theirs[2]))
        OwnedChildren.add(newPID)
        pid = newPID
        pidfd = newPidfd
        // The handle is a poll on the pidfd: readable once the child ends.
        let initialized = uv_poll_init(loop.uv, raw(uv_poll_t.self), newPidfd)
        if initialized == 0 { adopt() }
        for (fd, stream) in [stdin, stdout, stderr].enumerated() where ours[fd] >= 0 {
            guard let stream, (try? stream.open(fileDescriptor: ours[fd])) != nil else { continue }
            ours[fd] = -1  // the stream owns it now
        }
        guard initialized == 0 else {
            // Nothing could learn of its exit: end it now rather than lose it.
            _ = kill(newPID, SIGKILL)
            _ = waitpid(newPID, nil, 0)
            OwnedChildren.remove(newPID)
            throw uvErrno(initialized)
        }
        try uvCheck(uv_poll_start(raw(uv_poll_t.self), Int32(UV_READABLE.rawValue)) { handle, _, _ in
            guard let me = LoopHandle.object(UnsafeMutableRawPointer(handle)) as? ChildProcess else { return }
            me.reap()
        })
    }

    /// The pidfd is readable: the child has ended (or a poll error, after
    /// which waitpid tells).
    private func reap() {
        var status: Int32 = 0
        var reaped: Int32
        repeat { reaped = waitpid(pid, &status, WNOHANG) } while reaped < 0 && errno == EINTR
        guard reaped == pid else {
            // Not ended after all (a spurious wake-up); ECHILD means someone
            // else reaped it and its status is lost.
            if reaped < 0 { OwnedChildren.reaped(pid); uv_poll_stop(raw(uv_poll_t.self)); exited(.exited(0)) }
            return
        }
        OwnedChildren.reaped(pid)
        uv_poll_stop(raw(uv_poll_t.self))
        let signalled = status & 0x7f
        exited(signalled != 0 ? .signaled(signalled) : .exited((status >> 8) & 0xff))
    }

    /// `executable` itself if it holds a slash, else the first match in PATH
    /// (the child's, else ours), as execvp would find it.
    static func resolve(_ executable: String, environment: [String]?) throws(Errno) -> String {
        guard !executable.contains("/") else { return executable }
        let path = environment.flatMap { $0.last { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } }
            ?? ProcessEnvironment.value("PATH")
        switch ExecutableSearch.search(executable, path: path) {
        case .found(let found): return found
        case .notExecutable: throw .permissionDenied
        case .missing: throw .noSuchFileOrDirectory
        }
    }

    private func exited(_ status: TerminationStatus) {
        exitStatus = status
        let callback = onExit
        onExit = nil
        callback?(status)
    }

    /// Sends `signal` to the child. Fails with `.noSuchProcess` once it has
    /// been reaped.
    package func signal(_ signal: Int32) throws(Errno) {
        loop.assertInLoop()
        guard exitStatus == nil, !isClosed else { throw .noSuchProcess }
        // Not reaped yet, so the pid is still this child's.
        guard Glibc.kill(pid, signal) == 0 else { throw Errno(rawValue: errno) }
    }

    deinit {
        // After the poll handle is closed (libuv must not watch a closed fd).
        if pidfd >= 0 { Glibc.close(pidfd) }
    }

    override func willClose() {
        onExit = nil
        // Output still being read may outlast the process: its reader closes
        // the stream at end of stream. Everything else goes now.
        stdin?.close()
        for stream in [stdout, stderr] where stream?.isReading != true { stream?.close() }
    }
}

func withOptionalPointer<R>(
    _ array: inout [UnsafeMutablePointer<CChar>?]?,
    _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> R
) -> R {
    guard var entries = array else { return body(nil) }
    defer { array = entries }
    return entries.withUnsafeMutableBufferPointer { body($0.baseAddress) }
}

func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
