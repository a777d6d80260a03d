import FoundationEssentials
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
            // What a status bar shows beside the text: a tooltip and a class.
            return TimelineEntry(date: date, content: "\(Self.clock(date)) recording \(recording)\(suffix)",
                                 tooltip: "the recording feature is \(recording)", state: recording == "on" ? "recording" : nil)
        }
        return Timeline(entries: entries, policy: options.policy(after: start))
    }
}
