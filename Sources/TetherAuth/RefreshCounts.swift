import TetherGroup
import TetherJSON

/// Token refreshes of the group counted by outcome, in `refresh-counts.json`
/// under the store's own lock: whichever process refreshes (the host, an
/// extension, `tether token print`) adds its count, and the host's
/// `tether metrics` reads them all. Counting is best effort: a count that
/// cannot be written never fails a refresh.
public enum RefreshCounts {
    public enum Outcome: String, CaseIterable, Sendable {
        /// This process asked the server and got a new pair.
        case refreshed
        /// Another process had refreshed while this one waited for the lock.
        case joined
        /// The server refused the refresh token: the session ended.
        case sessionEnded
        /// No new token: the server was unavailable, refused the client, or
        /// the lock or the store failed.
        case failed
    }

    static func record(_ outcome: Outcome, in store: SharedStore) {
        _ = try? store.update { values in
            values[outcome.rawValue] = .integer((values[outcome.rawValue]?.int64Value ?? 0) &+ 1)
        }
    }

    /// The counts so far (0 for an outcome never seen, or an unreadable file).
    public static func read(group: GroupDirectory) -> [Outcome: Int64] {
        let values = (try? SharedStore.refreshCounts(in: group).values()) ?? [:]
        var counts: [Outcome: Int64] = [:]
        for outcome in Outcome.allCases { counts[outcome] = max(0, values[outcome.rawValue]?.int64Value ?? 0) }
        return counts
    }
}
