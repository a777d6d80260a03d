import TetherGroup

/// The liveness commands (`probe`, `hold`, `watch`), read without
/// ArgumentParser when their command line is plain.
///
/// ArgumentParser builds its whole command tree by reflection on every run:
/// in a static build that is about 1.5 ms of a probe's 3 ms, most of it the
/// runtime scanning protocol conformances; a status bar that probes every
/// second pays it every time. The commands' declarations stay the one
/// source of their grammar and help: this reader accepts only lines that
/// mean exactly one thing to them (targets, their long options, `--`) and
/// hands everything else (help, a typo, an unusual order) to ArgumentParser,
/// whose errors are the ones users see. Both readers produce a
/// `LivenessLine`; a test reads the same lines both ways and compares.
///
/// It keeps to arrays: the first `Set<String>` or `[String: String]` a
/// process builds costs the runtime a scan of every protocol conformance in
/// the binary (for `String: Hashable`), about a megabyte of pages touched.
enum FastCommandLine {
    /// The process's arguments without its name, read from argv directly
    /// (`CommandLine.arguments` is a lazily built global of its own).
    static func arguments() -> [String] {
        let argv = CommandLine.unsafeArgv
        return (1..<max(1, Int(CommandLine.argc))).compactMap { argv[$0].map { String(cString: $0) } }
    }

    /// The command to run, or nil to parse with ArgumentParser.
    static func parse(_ arguments: [String]) -> LivenessLine? {
        guard let command = arguments.first else { return nil }
        var positionals: [String] = []
        var trailing: [String]?
        var index = 1
        let valued: [String], switches: [String]
        switch command {
        case "probe": (valued, switches) = (["--group"], ["--json"])
        case "hold": (valued, switches) = (["--group", "--wait"], [])
        case "watch": (valued, switches) = (["--group", "--until", "--timeout"], ["--json"])
        default: return nil
        }
        // Seen options and flags as bits, values by position in `valued`.
        var values = [String](repeating: "", count: valued.count)
        var seenOptions = 0, seenFlags = 0
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
            if let flag = switches.firstIndex(of: argument) {
                guard seenFlags & (1 << flag) == 0 else { return nil }
                seenFlags |= 1 << flag
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
            guard let option = valued.firstIndex(of: name), !value.hasPrefix("-"), seenOptions & (1 << option) == 0 else { return nil }
            seenOptions |= 1 << option
            values[option] = value
        }
        func option(_ name: String) -> String? {
            valued.firstIndex(of: name).flatMap { seenOptions & (1 << $0) != 0 ? values[$0] : nil }
        }
        guard let target = target(positionals) else { return nil }
        let group = option("--group")
        switch command {
        case "probe":
            guard trailing == nil else { return nil }
            return .probe(target: target, group: group, json: seenFlags != 0)
        case "hold":
            guard let trailing, !trailing.isEmpty else { return nil }
            var wait: Seconds?
            if let text = option("--wait") {
                guard let seconds = Seconds(argument: text) else { return nil }
                wait = seconds
            }
            return .hold(target: target, group: group, wait: wait, command: trailing)
        default:
            guard trailing == nil else { return nil }
            var until: WatchUntil?
            var timeout: Seconds?
            if let text = option("--until") {
                guard let state = WatchUntil(rawValue: text) else { return nil }
                until = state
            }
            if let text = option("--timeout") {
                guard let seconds = Seconds(argument: text) else { return nil }
                timeout = seconds
            }
            return .watch(target: target, group: group, until: until, timeout: timeout, json: seenFlags != 0)
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
