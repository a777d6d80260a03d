import CTetherSystem
import FoundationEssentials
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about processes the demo did not start itself (a host's
/// extensions): which still run, and waiting for them to end.
enum LiveProcesses {
    /// Processes in any of `sessions` that have not exited (zombies have:
    /// they wait only for a parent to reap them).
    static func inSessions(_ sessions: Set<pid_t>) -> [pid_t] {
        guard !sessions.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard let fields = statFields(pid), fields.count > 3, let session = pid_t(fields[3]) else { return false }
            return sessions.contains(session) && !["Z", "X"].contains(fields[0])
        }
    }

    /// True once `pid` has exited (or is a zombie).
    static func hasEnded(_ pid: pid_t) -> Bool {
        guard let state = statFields(pid)?.first else { return true }
        return state == "Z" || state == "X"
    }

    static func command(_ pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "?").split(separator: "\n").first.map(String.init) ?? "?"
    }

    /// Waits until every one of `pids` has exited or the deadline passes;
    /// true if all did. A pidfd becomes readable at the exit, so this waits
    /// on the kernel, not on a polling loop.
    @discardableResult
    static func waitForExit(_ pids: [pid_t], untilNanoseconds deadline: UInt64) -> Bool {
        var descriptors: [pollfd] = []
        defer { descriptors.forEach { close($0.fd) } }
        for pid in pids {
            let fd = tether_pidfd_open(pid)
            if fd >= 0 { descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        }
        while true {
            var waiting = descriptors.filter { $0.revents == 0 }
            if waiting.isEmpty { return pids.allSatisfy(hasEnded) }
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return pids.allSatisfy(hasEnded) }
            let ready = poll(&waiting, nfds_t(waiting.count), Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready < 0 && errno != EINTR { return pids.allSatisfy(hasEnded) }
            for polled in waiting where polled.revents != 0 {
                if let index = descriptors.firstIndex(where: { $0.fd == polled.fd }) { descriptors[index].revents = polled.revents }
            }
        }
    }

    /// The fields of /proc/PID/stat after the command name: state, ppid,
    /// pgrp, session, ... (the name may hold spaces and parentheses).
    private static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: end)...].split(separator: " ")
    }
}
