import ArgumentParser

/// A non-negative, finite number of seconds from the command line.
struct Seconds: ExpressibleByArgument, Equatable {
    let value: Double

    init(_ value: Double) { self.value = value }

    /// A wait held in milliseconds, to be said as the user gave it.
    init(milliseconds: UInt64) { self.value = Double(milliseconds) / 1000 }

    init?(argument: String) {
        guard let value = Double(argument), value.isFinite, value >= 0, value <= 86_400 * 365 else { return nil }
        self.value = value
    }

    var milliseconds: UInt64 { UInt64((value * 1000).rounded(.up)) }

    /// How `--help` shows a default: "3", not "Seconds(value: 3.0)".
    var defaultValueDescription: String { value == value.rounded() ? String(Int(value)) : String(value) }

    var text: String {
        value == value.rounded() ? "\(Int(value)) seconds" : "\(value) seconds"
    }
}
