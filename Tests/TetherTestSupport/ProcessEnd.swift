import CTetherSystem
import Foundation

/// True once `pid` has ended (a zombie counts: an orphan may wait a while
/// to be reaped), waiting on a pidfd, which becomes readable at the end:
/// an event, not a poll. At most `seconds` (scaled); 0 asks once.
package func processEnded(_ pid: Int32, within seconds: Double = 0) -> Bool {
    let fd = tether_pidfd_open(pid)
    guard fd >= 0 else { return errno == ESRCH }
    defer { close(fd) }
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let deadline = TestTimeout.deadline(after: seconds)
    for _ in 0..<100 {
        let left = Int32(max(0, min(60_000, deadline.timeIntervalSinceNow * 1000)))
        let ready = poll(&entry, 1, left)
        if ready > 0 { return true }
        if ready == 0 || Date() >= deadline { return false }
    }
    return false
}
