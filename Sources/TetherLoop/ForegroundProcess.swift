import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command in the foreground without an event loop, as flock(1) or a
/// shell does: `posix_spawnp` (a vfork-style clone: no copy of the parent's
/// page tables), then `sigwaitinfo` for the child's exit and the signals to
/// pass on to it.
///
/// `tether hold` uses it: libuv's `uv_spawn` forks and resets each signal
/// with its own system call in the child, which was a third of a hold's
/// cost over `flock -n`.
///
/// The calling thread blocks the forwarded signals and SIGCHLD while it
/// waits (they must not be unblocked on another thread of the process, or
/// one could go there). The child starts as libuv's children did: every
/// signal at its default, none blocked, whatever this process inherited.
public enum ForegroundProcess {
    public enum Failure: Error, Sendable {
        /// The command did not start (ENOENT, EACCES, ...).
        case spawn(Errno)
        /// It started, but waiting for it failed.
        case wait(Errno)
    }

    /// Runs `argv` (argv[0] looked up in `PATH`) with this process's
    /// environment and standard descriptors. Each of `forwarding` that
    /// arrives meanwhile, or was already pending, is sent on to the child.
    public static func run(_ argv: [String], forwarding signals: [Int32]) throws(Failure) -> TerminationStatus {
        guard !argv.isEmpty else { throw .spawn(.invalidArgument) }
        var waited = try block(forwarding: signals)
        // An ignored SIGCHLD (inherited through exec) would make the kernel
        // reap the child unasked and never signal its end.
        var defaultAction = sigaction()
        defaultAction.__sigaction_handler.sa_handler = SIG_DFL
        var previousChildAction = sigaction()
        sigaction(SIGCHLD, &defaultAction, &previousChildAction)
        defer { sigaction(SIGCHLD, &previousChildAction, nil) }

        let pid = try spawn(argv)
        while true {
            var info = siginfo_t()
            let signal = sigwaitinfo(&waited, &info)
            if signal == -1 {
                guard errno == EINTR else { throw .wait(Errno(rawValue: errno)) }
                continue
            }
            if signal != SIGCHLD {
                kill(pid, signal)
                continue
            }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                // A forwarded signal that came with the exit must not kill
                // this process once the caller unblocks it: take it here.
                var late = waited
                sigdelset(&late, SIGCHLD)
                var now = timespec()
                while sigtimedwait(&late, nil, &now) > 0 {}
                // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
                let termination = status & 0x7f
                return termination != 0 && termination != 0x7f ? .signaled(termination) : .exited((status >> 8) & 0xff)
            }
            if reaped == -1 && errno != EINTR { throw .wait(Errno(rawValue: errno)) }
        }
    }

    /// Blocks `signals` and SIGCHLD on this thread (before `run`, too, so
    /// none that comes meanwhile is lost) and returns that set. They stay
    /// blocked after `run` returns: the caller is about to exit, and
    /// unblocking one that is still pending would be its death.
    @discardableResult
    public static func block(forwarding signals: [Int32]) throws(Failure) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals + [SIGCHLD] { sigaddset(&set, signal) }
        let rc = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard rc == 0 else { throw .spawn(Errno(rawValue: rc)) }
        return set
    }

    private static func spawn(_ argv: [String]) throws(Failure) -> pid_t {
        var attributes = posix_spawnattr_t()
        var rc = posix_spawnattr_init(&attributes)
        guard rc == 0 else { throw .spawn(Errno(rawValue: rc)) }
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)  // glibc leaves SIGKILL, SIGSTOP and its own alone
        rc = posix_spawnattr_setsigmask(&attributes, &none)
        if rc == 0 { rc = posix_spawnattr_setsigdefault(&attributes, &all) }
        if rc == 0 { rc = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) }
        guard rc == 0 else { throw .spawn(Errno(rawValue: rc)) }

        var arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        guard !arguments.dropLast().contains(where: { $0 == nil }) else { throw .spawn(.noMemory) }
        var pid: pid_t = 0
        rc = posix_spawnp(&pid, argv[0], nil, &attributes, &arguments, environ)
        guard rc == 0 else { throw .spawn(Errno(rawValue: rc)) }
        return pid
    }
}
