import TetherIPC

/// How fast one extension's pushes reach the desktop: a burst of `burst`,
/// then one every `intervalMilliseconds` (a token bucket). What comes
/// faster is coalesced: the latest is held, counted, and shown as one
/// summary when the next turn comes, replacing the previous summary. So
/// the notification server hears from one extension at most that often,
/// however fast it pushes. A value: events in, decisions out.
struct DesktopPace {
    static let burst = 5
    static let intervalMilliseconds: UInt64 = 2_000
    /// Senders remembered at once; past it, those with nothing held and a
    /// full bucket are forgotten.
    static let maximumSenders = 1_024

    private struct Sender {
        var tokens: Int
        /// When the bucket was last refilled (loop milliseconds).
        var refilledAt: UInt64
        var held: DesktopNotification?
        var heldCount = 0
        /// The server's id of its last summary, replaced by the next.
        var summary: UInt32?
    }

    enum Decision: Equatable {
        case show
        /// Held; `flushAfter`: arm a timer for this long (nil: one is armed).
        case coalesced(flushAfter: UInt64?)
    }

    private var senders: [String: Sender] = [:]

    var count: Int { senders.count }

    mutating func admit(_ name: String, _ notification: DesktopNotification, now: UInt64) -> Decision {
        if senders[name] == nil {
            if senders.count >= Self.maximumSenders { forgetIdle(now: now) }
            senders[name] = Sender(tokens: Self.burst, refilledAt: now)
        }
        refill(name, now: now)
        guard var sender = senders[name] else { return .show }
        if sender.held == nil, sender.tokens > 0 {
            sender.tokens -= 1
            senders[name] = sender
            return .show
        }
        let armed = sender.held != nil
        sender.held = notification
        sender.heldCount += 1
        senders[name] = sender
        return .coalesced(flushAfter: armed ? nil : wait(for: sender, now: now))
    }

    /// The summary due for `name` now (what it held, and how many), or,
    /// if its turn has not come yet, how long to wait.
    mutating func due(_ name: String, now: UInt64) -> Result<(notification: DesktopNotification, count: Int, replacing: UInt32?), Wait> {
        refill(name, now: now)
        guard var sender = senders[name], let held = sender.held else { return .failure(Wait(milliseconds: nil)) }
        guard sender.tokens > 0 else { return .failure(Wait(milliseconds: wait(for: sender, now: now))) }
        sender.tokens -= 1
        let count = sender.heldCount
        sender.held = nil
        sender.heldCount = 0
        senders[name] = sender
        return .success((held, count, sender.summary))
    }

    struct Wait: Error {
        /// Nil: nothing is held.
        let milliseconds: UInt64?
    }

    /// The server's id of `name`'s summary just shown.
    mutating func summaryShown(_ name: String, as server: UInt32) {
        senders[name]?.summary = server
    }

    /// The server went: its summaries' ids name nothing of the host's now.
    mutating func forgetSummaries() {
        for name in Array(senders.keys) { senders[name]?.summary = nil }
    }

    private mutating func refill(_ name: String, now: UInt64) {
        guard var sender = senders[name], now > sender.refilledAt else { return }
        let earned = (now - sender.refilledAt) / Self.intervalMilliseconds
        guard earned > 0 else { return }
        sender.tokens = min(Self.burst, sender.tokens + Int(min(earned, UInt64(Self.burst))))
        sender.refilledAt = sender.tokens == Self.burst ? now : sender.refilledAt + earned * Self.intervalMilliseconds
        senders[name] = sender
    }

    private func wait(for sender: Sender, now: UInt64) -> UInt64 {
        let next = sender.refilledAt + Self.intervalMilliseconds
        return next > now ? next - now : 0
    }

    private mutating func forgetIdle(now: UInt64) {
        for name in Array(senders.keys) {
            refill(name, now: now)
            if let sender = senders[name], sender.held == nil, sender.tokens == Self.burst { senders[name] = nil }
        }
    }
}
