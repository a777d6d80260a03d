import CTetherSystem
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherLoop

/// Ends what extensions started when the host dies. PR_SET_PDEATHSIG reaches
/// an extension's main process only; its background children live on in its
/// process group. One small process per host (`tether_start_group_reaper`)
/// is told each group as it starts and ends, and when the host's end of the
/// pipe closes, however the host exits (kill -9 too), it sends the groups
/// still listed SIGTERM, then SIGKILL after the grace.
final class GroupReaper {
    private let graceMilliseconds: Int32
    private let logger: Logger
    private var records: Int32 = -1
    /// End of file here once the reaper has exited.
    private var lifeline: Int32 = -1
    /// What the reaper guards, to tell a replacement if it dies.
    private var groups: Set<Int32> = []
    private var warned = false

    init(graceMilliseconds: UInt64, logger: Logger) {
        self.graceMilliseconds = Int32(clamping: graceMilliseconds)
        self.logger = logger
        start()
        // After the reaper (init's, not ours): what an extension leaves when
        // its main process dies comes to the host, so a stop can wait for it.
        _ = tether_become_subreaper()
    }

    deinit { close() }

    /// `group` is running: the reaper ends it if the host dies.
    func guardGroup(_ group: Int32) {
        guard group > 0 else { return }
        groups.insert(group)
        send(group)
    }

    /// `group` is gone: its id may soon name another process's group.
    func releaseGroup(_ group: Int32) {
        guard group > 0, groups.remove(group) != nil else { return }
        send(-group)
    }

    /// The host is done: the reaper ends what is still listed (after a clean
    /// stop, nothing) and exits. Returns once it has, within the grace and a
    /// second: a host that returns leaves no reaper behind.
    func close() {
        guard records >= 0 else { return }
        Glibc.close(records)
        records = -1
        guard lifeline >= 0 else { return }
        var waiting = pollfd(fd: lifeline, events: Int16(POLLIN), revents: 0)
        let deadline = MonotonicClock.seconds() + Double(graceMilliseconds) / 1000 + 1
        while case let left = deadline - MonotonicClock.seconds(), left > 0 {
            let ready = poll(&waiting, 1, Int32(clamping: Int(left * 1000) + 1))
            if ready > 0 || (ready < 0 && errno != EINTR) { break }
        }
        Glibc.close(lifeline)
        lifeline = -1
    }

    private func start() {
        if lifeline >= 0 { Glibc.close(lifeline) }
        records = tether_start_group_reaper(graceMilliseconds, &lifeline)
        if records < 0 {
            warnOnce("cannot start the group reaper (\(String(cString: strerror(errno)))); if the host is killed, what its extensions started in the background may outlive it")
        }
    }

    private func send(_ record: Int32) {
        guard records >= 0 else { return }
        var value = record
        let written = write(records, &value, MemoryLayout<Int32>.size)
        guard written < 0 else { return }
        switch errno {
        case EPIPE:
            // The reaper was killed. Only it held the read end, so a new one
            // can take over the whole list without a second reaper acting.
            Glibc.close(records)
            start()
            guard records >= 0 else { return }
            for group in groups {
                var value = group
                _ = write(records, &value, MemoryLayout<Int32>.size)
            }
        case EAGAIN:
            // It is stopped (SIGSTOP) and its pipe is full; never block the host.
            warnOnce("the group reaper is not reading (stopped?); groups started meanwhile are not guarded")
        default:
            warnOnce("cannot reach the group reaper: \(String(cString: strerror(errno)))")
        }
    }

    private func warnOnce(_ message: String) {
        guard !warned else { return }
        warned = true
        logger.warning("tether host: \(message)")
    }
}
