import TetherJSON
import TetherLog

/// What the day showed, in numbers.
struct DemoSummary {
    let ok: Bool
    let interrupted: Bool
    let expiries: Int
    let refreshes: Int
    let reuseDetected: Int
    /// nil when the day ended before the last step could tell.
    let loggedOut: Bool?
    let askersPerExpiry: Int
    let tokenRequests: Int
    let hostDeathNoticedMs: Double?
    let extensionsEndedMs: Double?
    let checks: [DemoCheck]
    let leftBehind: [String]
    let seconds: Double

    init(day: DemoDay, narrator: DemoNarrator, leftBehind: [String], interrupted: Bool) {
        checks = narrator.checks
        self.interrupted = interrupted
        self.leftBehind = leftBehind
        expiries = day.expiries
        refreshes = day.refreshes
        reuseDetected = day.counters["reuseDetected"] ?? 0
        tokenRequests = day.counters["tokenRequests"] ?? 0
        loggedOut = day.loggedOut
        askersPerExpiry = day.askersPerExpiry
        hostDeathNoticedMs = day.hostDeathNoticedMs
        extensionsEndedMs = day.extensionsEndedMs
        seconds = narrator.elapsed
        ok = !interrupted && checks.allSatisfy(\.ok) && checks.count > 1 && leftBehind.isEmpty
            && expiries == DemoDay.expiries && refreshes == expiries && reuseDetected == 0 && loggedOut == false
    }

    func print(to narrator: DemoNarrator) {
        let failed = checks.filter { !$0.ok }
        narrator.heading(ok ? "Summary: every check held" : interrupted ? "Summary: interrupted" : "Summary: \(failed.count) check(s) failed")
        narrator.say("    checks          \(checks.count - failed.count) of \(checks.count) held")
        narrator.say("    expiries        \(expiries) (each met by \(askersPerExpiry) requests at once)")
        narrator.say("    refreshes       \(refreshes) (the server's count across the expiries)")
        narrator.say("    reuse detected  \(reuseDetected)")
        narrator.say("    logged out      \(loggedOut.map { $0 ? "yes" : "no" } ?? "not known (the day did not get that far)")")
        if let hostDeathNoticedMs {
            narrator.say("    host death      noticed by the keyboard in \(TextFormat.fixed(hostDeathNoticedMs, 1)) ms"
                + (extensionsEndedMs.map { "; its extensions ended in \(TextFormat.fixed($0, 0)) ms" } ?? ""))
        }
        narrator.say("    left behind     \(leftBehind.isEmpty ? "nothing" : leftBehind.joined(separator: ", "))")
        narrator.say("    took            \(TextFormat.fixed(seconds, 1)) s")
        for check in failed { narrator.say("    ✗ \(check.step): \(check.what)\(check.detail.map { " — \($0)" } ?? "")") }
    }

    var jsonValue: JSONValue {
        var object: [String: JSONValue] = [
            "ok": .bool(ok), "interrupted": .bool(interrupted),
            "expiries": .integer(expiries), "refreshes": .integer(refreshes),
            "reuseDetected": .integer(reuseDetected), "loggedOut": loggedOut.map { .bool($0) } ?? .null,
            "requestsPerExpiry": .integer(askersPerExpiry), "tokenRequests": .integer(tokenRequests),
            "checks": .integer(checks.count),
            "failures": .array(checks.filter { !$0.ok }.map(\.jsonValue)),
            "leftBehind": .array(leftBehind.map { .string($0) }),
            "seconds": .double((seconds * 10).rounded() / 10),
        ]
        if let hostDeathNoticedMs { object["hostDeathNoticedMs"] = .double((hostDeathNoticedMs * 10).rounded() / 10) }
        if let extensionsEndedMs { object["extensionsEndedMs"] = .double(extensionsEndedMs.rounded()) }
        return .object(object)
    }
}
