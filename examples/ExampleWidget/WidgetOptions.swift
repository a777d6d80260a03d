import FoundationEssentials
import Glibc
import TetherExtension

/// The widget's options and its clock face.
extension ExampleWidget {
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
