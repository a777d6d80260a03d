import TetherGroup

/// The liveness commands (`probe`, `hold`, `watch`) read without
/// ArgumentParser when their command line is plain.
///
/// ArgumentParser builds its whole command tree by reflection on every run:
/// in a static build that is about 1.5 ms of a probe's 3 ms, most of it the
/// runtime scanning protocol conformances; a status bar that probes every
/// second pays it every time. The commands' declarations stay the one
/// source of their grammar and help: this reader accepts only lines that
/// mean exactly one thing to them (targets, their long options, `--`) and
/// hands everything else (help, a typo, an unusual order) to ArgumentParser,
/// whose errors are the ones users see. The CLI tests run the same lines
/// both ways and compare.
enum FastCommandLine {
    /// The command to run, or nil to parse with ArgumentParser.
    static func parse(_ arguments: [String]) -> (() throws -> Void)? {
        guard let command = arguments.first else { return nil }
        var options: [String: String] = [:]
        var flags: Set<String> = []
        var positionals: [String] = []
        var trailing: [String]?
        var index = 1
        let valued: Set<String>, switches: Set<String>
        switch command {
        case "probe": (valued, switches) = (["--group"], ["--json"])
        case "hold": (valued, switches) = (["--group", "--wait"], [])
        case "watch": (valued, switches) = (["--group", "--until", "--timeout"], ["--json"])
        default: return nil
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                trailing = Array(arguments[index...])
                break
            }
            guard argument.hasPrefix("-") else {
                positionals.append(argument)
                continue
            }
            if switches.contains(argument) {
                guard flags.insert(argument).inserted else { return nil }
                continue
            }
            let name: String, value: String
            if let equals = argument.firstIndex(of: "=") {
                (name, value) = (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
                // ArgumentParser reads `--group=` as no value (and takes the next argument).
                guard !value.isEmpty else { return nil }
            } else {
                guard index < arguments.count else { return nil }
                (name, value) = (argument, arguments[index])
                index += 1
            }
            guard valued.contains(name), !value.hasPrefix("-"), options.updateValue(value, forKey: name) == nil else { return nil }
        }
        guard let target = target(positionals) else { return nil }
        let group = options["--group"]
        switch command {
        case "probe":
            guard trailing == nil else { return nil }
            let json = flags.contains("--json")
            return { try Probe.execute(target: target, group: group, json: json) }
        case "hold":
            guard let trailing, !trailing.isEmpty else { return nil }
            var wait: Seconds?
            if let text = options["--wait"] {
                guard let seconds = Seconds(argument: text) else { return nil }
                wait = seconds
            }
            return { [wait] in try Hold.execute(target: target, group: group, wait: wait, command: trailing) }
        default:
            guard trailing == nil else { return nil }
            var until: WatchUntil?
            var timeout: Seconds?
            if let text = options["--until"] {
                guard let state = WatchUntil(rawValue: text) else { return nil }
                until = state
            }
            if let text = options["--timeout"] {
                guard let seconds = Seconds(argument: text) else { return nil }
                timeout = seconds
            }
            let json = flags.contains("--json")
            return { [until, timeout] in try Watch.execute(target: target, group: group, until: until, timeout: timeout, json: json) }
        }
    }

    /// `host` or `feature NAME` with a valid name; anything else is for
    /// ArgumentParser (and the commands' own errors) to explain.
    private static func target(_ positionals: [String]) -> LockTarget? {
        switch positionals.count {
        case 1 where positionals[0] == "host": return .host
        case 2 where positionals[0] == "feature": return (try? FeatureName(positionals[1])).map { .feature($0) }
        default: return nil
        }
    }
}
