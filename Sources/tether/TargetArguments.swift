import ArgumentParser
import TetherGroup

enum TargetKind: String, ExpressibleByArgument, CaseIterable {
    case host
    case feature
    /// `watch` only: the desktop notifications' closes and actions.
    case notifications
}

/// `host | feature NAME`.
struct TargetArguments: ParsableArguments {
    @Argument(help: "What to look at: 'host', or 'feature' followed by its name ('watch' also takes 'notifications').")
    var kind: TargetKind

    @Argument(help: ArgumentHelp(
        "The feature's name: 1-64 of a-z 0-9 . _ - starting with a letter or digit.", valueName: "NAME"))
    var name: String?

    func target() throws -> LockTarget { try Self.target(kind, name) }

    static func target(_ kind: TargetKind, _ name: String?) throws -> LockTarget {
        switch (kind, name) {
        case (.host, nil):
            return .host
        case (.host, let name?):
            throw CLIError.badInput("'host' takes no name, but \(quotedInput(name)) was given")
        case (.feature, nil):
            throw CLIError.badInput("'feature' needs a NAME")
        case (.feature, let name?):
            do { return .feature(try FeatureName(name)) } catch { throw CLIError(error) }
        case (.notifications, _):
            throw CLIError.badInput("'notifications' can only be watched (tether watch notifications)")
        }
    }
}
