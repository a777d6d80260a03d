import ArgumentParser

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure Tether against baselines taken in the same run.")

    func run() throws {}
}
