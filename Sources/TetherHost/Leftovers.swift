/// What is left of an extension's ended launches while it is being cleared
/// (its process groups signalled, its cgroup and TMPDIR removed): a peer in
/// one of those groups is still this extension's, and a stop waits until
/// none is left. A value: the supervisor tells it each clearing's start
/// and end, and runs what it hands back.
struct Leftovers {
    private var groups: Set<Int32> = []
    private var pending = 0
    private var waiting: [() -> Void] = []

    /// A launch's leftovers are being cleared.
    var isClearing: Bool { pending > 0 }

    /// `pid` or `group` is one of the groups being cleared.
    func holds(pid: Int32, group: Int32) -> Bool { groups.contains { pid == $0 || group == $0 } }

    /// Clearing what `group` left began (0: it had no group of its own).
    mutating func began(group: Int32) {
        pending += 1
        if group > 0 { groups.insert(group) }
    }

    /// Clearing `group` ended: what waited for none to be left, once none is.
    mutating func ended(group: Int32) -> [() -> Void] {
        groups.remove(group)
        pending -= 1
        guard pending == 0 else { return [] }
        defer { waiting.removeAll() }
        return waiting
    }

    /// `then` once none is left: false (nothing kept) if none is now.
    mutating func whenCleared(_ then: @escaping () -> Void) -> Bool {
        guard pending > 0 else { return false }
        waiting.append(then)
        return true
    }
}
