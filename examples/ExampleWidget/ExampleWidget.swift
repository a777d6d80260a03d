import FoundationEssentials
import Glibc
import TetherExtension

/// A clock widget: a few entries a few seconds apart, each showing the time,
/// whether the "recording" feature runs and, once `orders.url` is set in the
/// defaults and someone is logged in, the orders. Options: --every SECONDS
/// (5), --entries N (3), --policy at-end|never|after:SECONDS (at-end).
@main
struct ExampleWidget: Widget {
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        let options = Options(context.arguments)
        let recording = (try? context.isFeatureRunning("recording")) == true ? "on" : "off"
        let suffix = await OrdersFeed.summary(in: context).map { " · \($0)" } ?? ""
        let start = Date()
        let entries = (0..<options.entries).map { index in
            let date = start.addingTimeInterval(Double(index) * options.every)
            return TimelineEntry(date: date, content: "\(Self.clock(date)) recording \(recording)\(suffix)")
        }
        return Timeline(entries: entries, policy: options.policy(after: start))
    }

    /// HH:mm:ss in local time.
    nonisolated static func clock(_ date: Date) -> String {
        guard var seconds = time_t(exactly: date.timeIntervalSince1970.rounded(.down)) else { return "--:--:--" }
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "--:--:--" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    struct Options {
        var every = 5.0
        var entries = 3
        var policyText = "at-end"

        init(_ arguments: [String]) {
            var iterator = arguments.makeIterator()
            while let argument = iterator.next() {
                switch argument {
                case "--every": every = iterator.next().flatMap(Double.init).map { max(0.01, $0) } ?? every
                case "--entries": entries = iterator.next().flatMap(Int.init).map { max(1, $0) } ?? entries
                case "--policy": policyText = iterator.next() ?? policyText
                default: break
                }
            }
        }

        func policy(after start: Date) -> ReloadPolicy {
            if policyText == "never" { return .never }
            if policyText.hasPrefix("after:"), let seconds = Double(policyText.dropFirst(6)) {
                return .after(start.addingTimeInterval(seconds))
            }
            return .atEnd
        }
    }
}
