import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command in the foreground without an event loop, as flock(1) or a
/// shell does: `posix_spawnp` (a vfork-style clone: no copy of the parent's
/// page tables, no per-signal resets), then `sigwaitinfo` for the child's
/// exit and the signals to pass on to it.
///
/// `tether hold` uses it: libuv's `uv_spawn` forks and resets every signal
/// in the child, which was a third of a hold's cost over `flock -n`.
///
/// The caller's thread blocks the forwarded signals and SIGCHLD while it
/// waits; it must be the only thread that could take them (no loop running,
/// no helper threads), or a signal could go to a thread that does not pass
/// it on.
public enum ForegroundProcess {
    /// Runs `argv` (argv[0] looked up in `PATH`) with the environment and
    /// standard descriptors of this process and its signal dispositions,
    /// except SIGPIPE, which Tether ignores and the child gets back at its
    /// default. Each of `forwarding` that arrives meanwhile is sent on to
    /// the child. Throws the spawn's error (ENOENT, EACCES, ...).
    public static func run(_ argv: [String], forwarding signals: [Int32]) throws(Errno) -> TerminationStatus {
        guard !argv.isEmpty else { throw .invalidArgument }
        var waited = sigset_t()
        sigemptyset(&waited)
        for signal in signals + [SIGCHLD] { sigaddset(&waited, signal) }
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &waited, &previousMask)
        defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setsigmask(&attributes, &previousMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        guard !arguments.dropLast().contains(where: { $0 == nil }) else { throw .noMemory }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, argv[0], nil, &attributes, &arguments, environ)
        guard spawned == 0 else { throw Errno(rawValue: spawned) }

        while true {
            var info = siginfo_t()
            let signal = sigwaitinfo(&waited, &info)
            if signal == -1 { continue }  // EINTR (a stop and continue, say)
            if signal != SIGCHLD {
                kill(pid, signal)
                continue
            }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
                let termination = status & 0x7f
                return termination != 0 && termination != 0x7f ? .signaled(termination) : .exited((status >> 8) & 0xff)
            }
            if reaped == -1 && errno != EINTR { throw Errno(rawValue: errno) }
        }
    }
}
