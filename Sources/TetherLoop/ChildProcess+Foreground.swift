import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A child in the foreground, without an event loop, as flock(1) or a shell
/// runs one: started by the same spawn as every other child (`ownSpawn`,
/// vfork-style, every signal at its default, none blocked), its exit and
/// the signals to pass on taken by `sigwaitinfo`. `tether hold` uses it: a
/// loop's set-up was most of a hold's cost over `flock -n`.
///
/// The calling thread blocks the forwarded signals and SIGCHLD while it
/// waits (they must not be unblocked on another thread of the process, or
/// one could go there).
extension ChildProcess {
    package enum ForegroundFailure: Error, Sendable {
        /// The command did not start (ENOENT, EACCES, ...).
        case spawn(Errno)
        /// It started, but waiting for it failed.
        case wait(Errno)
    }

    /// Runs `argv` (argv[0] looked up in `PATH`) with this process's
    /// environment, standard descriptors and whatever else it inherited.
    /// Each of `forwarding` that arrives meanwhile, or was already pending,
    /// is sent on to the child.
    package static func runInForeground(_ argv: [String], forwarding signals: [Int32]) throws(ForegroundFailure) -> TerminationStatus {
        guard let executable = argv.first else { throw .spawn(.invalidArgument) }
        var waited = try blockForForeground(forwarding: signals)
        // An ignored SIGCHLD (inherited through exec) would make the kernel
        // reap the child unasked and never signal its end.
        var defaultAction = sigaction()
        defaultAction.__sigaction_handler.sa_handler = SIG_DFL
        var previousChildAction = sigaction()
        sigaction(SIGCHLD, &defaultAction, &previousChildAction)
        defer { sigaction(SIGCHLD, &previousChildAction, nil) }

        let options = ProcessOptions(executable: executable, arguments: Array(argv.dropFirst()),
                                     stdin: .inherit, stdout: .inherit, stderr: .inherit)
        // Reaped by pid, on SIGCHLD: no pidfd, so hold runs before Linux 5.3 too.
        let pid: Int32
        do { pid = try ownSpawn(options, stdio: (0, 1, 2), keepInherited: true, withoutPidfd: true).pid } catch { throw .spawn(error) }
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

    /// Blocks `signals` and SIGCHLD on this thread (before `runInForeground`,
    /// too, so none that comes meanwhile is lost) and returns that set. They
    /// stay blocked after the run returns: the caller is about to exit, and
    /// unblocking one that is still pending would be its death.
    @discardableResult
    package static func blockForForeground(forwarding signals: [Int32]) throws(ForegroundFailure) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals + [SIGCHLD] { sigaddset(&set, signal) }
        let rc = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard rc == 0 else { throw .spawn(Errno(rawValue: rc)) }
        return set
    }
}
