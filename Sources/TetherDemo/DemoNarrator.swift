import FoundationEssentials
import TetherJSON
import TetherLog
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// The demo's story as it happens: a progress line per step, what was seen,
/// and each check with ✓ or ✗. With `--json` the story goes to stderr, so
/// stdout carries only the summary object.
final class DemoNarrator: @unchecked Sendable {
    /// Never traps on a closed reader (`tether demo | head`).
    private let out: LogOutput
    private let color: Bool
    private let started = MonotonicClock.nanoseconds()
    private(set) var checks: [DemoCheck] = []
    private var currentStep = ""
    private var stepNumber = 0
    let totalSteps: Int

    init(json: Bool, totalSteps: Int) {
        out = json ? .standardError : .standardOutput
        let fd = json ? STDERR_FILENO : STDOUT_FILENO
        color = isatty(fd) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            && ProcessInfo.processInfo.environment["TERM"] != "dumb"
        self.totalSteps = totalSteps
    }

    var elapsed: Double { Double(MonotonicClock.nanoseconds() - started) / 1e9 }

    func say(_ text: String) { out.write(text) }

    func step(_ title: String) {
        stepNumber += 1
        currentStep = title
        let counter = "[\(stepNumber)/\(totalSteps)]"
        say("")
        say(paint("\(counter) \(title)", "1") + paint("  \(TextFormat.padded(TextFormat.fixed(elapsed, 1), 5) + " s")", "2"))
    }

    /// Something the demo saw, indented under its step.
    func detail(_ text: String) { say("      " + text) }

    /// Records a check and prints it.
    @discardableResult
    func check(_ what: String, _ ok: Bool, _ detail: String? = nil) -> Bool {
        checks.append(DemoCheck(step: currentStep, what: what, ok: ok, detail: ok ? nil : detail))
        let mark = ok ? paint("✓", "32") : paint("✗", "31")
        say("    \(mark) \(what)" + (ok || detail == nil ? "" : paint(" — \(detail ?? "")", "31")))
        return ok
    }

    /// A step that could not go on: recorded as a failed check.
    func failed(_ failure: DemoFailure) { check("\(currentStep) could not finish", false, failure.description) }

    func heading(_ text: String) {
        say("")
        say(paint(text, "1"))
    }

    private func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// One thing the demo verified.
struct DemoCheck {
    let step: String
    let what: String
    let ok: Bool
    let detail: String?

    var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["step": .string(step), "check": .string(what), "ok": .bool(ok)]
        if let detail { object["detail"] = .string(detail) }
        return .object(object)
    }
}
