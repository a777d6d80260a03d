/// Who may refresh.
public enum RefreshPolicy: Sendable, Equatable {
    /// Any process refreshes, one at a time under the group's refresh lock.
    case coordinated
    /// Ask the host (over its socket); with no host, refresh coordinated
    /// unless `strict`, which fails with `AuthError.noHost` instead.
    case hostBrokered(strict: Bool)
}

/// How refreshes are coordinated; the last two exist so benchmarks can show
/// what coordination buys, and are never what a caller should use.
public enum Coordination: String, Sendable, CaseIterable {
    /// One refresh per process at a time, and one across processes (the lock).
    case full
    /// Single flight in this process only.
    case inProcess = "in-process"
    /// Every caller refreshes on its own, as an uncoordinated client does.
    case none
}
