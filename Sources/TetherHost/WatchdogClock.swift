import TetherLoop

/// What a `WatchdogClock` ticks: a watchdog, or a test's stand-in.
protocol WatchdogTicking: AnyObject {
    var periodMilliseconds: UInt64 { get }
    func tick()
}

/// One timer for every watchdog of the same period: they tick together,
/// so a host with thousands attached wakes once a period for all their
/// pings, not once for each (a timer each, started at each attach, woke an
/// idle host 220 times a second with 1,000 attached). A watchdog that joins
/// ticks first at its group's next tick, within one period. Lives on the
/// host's loop.
final class WatchdogClock {
    private let loop: EventLoop
    private var groups: [UInt64: (timer: LoopTimer, members: [ObjectIdentifier: any WatchdogTicking])] = [:]

    init(loop: EventLoop) { self.loop = loop }

    deinit { for group in groups.values { group.timer.close() } }

    func add(_ member: any WatchdogTicking) {
        let period = member.periodMilliseconds
        if groups[period] == nil {
            let timer = LoopTimer(loop: loop)
            timer.start(afterMilliseconds: period, repeatMilliseconds: period) { [unowned self] in self.tick(period) }
            groups[period] = (timer, [:])
        }
        groups[period]?.members[ObjectIdentifier(member)] = member
    }

    func remove(_ member: any WatchdogTicking) {
        let period = member.periodMilliseconds
        guard groups[period]?.members.removeValue(forKey: ObjectIdentifier(member)) != nil,
              groups[period]?.members.isEmpty == true else { return }
        groups.removeValue(forKey: period)?.timer.close()
    }

    private func tick(_ period: UInt64) {
        // A tick may remove its watchdog (or, through its verdict, others).
        for member in groups[period].map({ Array($0.members.values) }) ?? []
        where groups[period]?.members[ObjectIdentifier(member)] != nil {
            member.tick()
        }
    }
}
