import TetherGroup

/// Token refreshes of the group counted by outcome, in `GROUP/tallies/`
/// (one `TallyFile` an outcome): whichever process refreshes (the host, an
/// extension, `tether token print`) adds to them without a lock, after the
/// refresh lock is released, and the host's `tether metrics` reads them.
/// Counting is best effort: a count that cannot be written never fails or
/// delays a refresh.
package struct RefreshCounts: Sendable {
    package enum Outcome: String, CaseIterable, Sendable {
        /// This process asked the server and got a new pair.
        case refreshed
        /// Another process had refreshed while this one waited for the lock.
        case joined
        /// The server refused the refresh token, and this process ended the session.
        case sessionEnded
        /// No new token: the server was unavailable, refused the client, or
        /// the lock or the store failed.
        case failed
    }

    private let tallies: [Outcome: TallyFile]

    package init(group: GroupDirectory) throws(GroupError) {
        var tallies: [Outcome: TallyFile] = [:]
        for outcome in Outcome.allCases {
            tallies[outcome] = try TallyFile(group: group, name: "refresh-\(outcome.rawValue)")
        }
        self.tallies = tallies
    }

    func record(_ outcome: Outcome) {
        tallies[outcome]?.add()
    }

    /// The counts so far; an outcome whose count cannot be read is left
    /// out (not counted as 0).
    package func read() -> [Outcome: Int64] {
        var counts: [Outcome: Int64] = [:]
        for (outcome, tally) in tallies {
            if let count = tally.count() { counts[outcome] = count }
        }
        return counts
    }
}
