#if canImport(Glibc)
import Glibc
#endif
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
    /// (`CommandLine.arguments` is a lazily built global of its own). One
    /// that is not UTF-8 is refused, as is such a `TETHER_GROUP`: decoding
    /// puts U+FFFD for its bytes, which names another key, file or
    /// directory (two keys became one; `hold` ran its command on another file).
    static func arguments() throws(CLIError) -> [String] {
        let argv = CommandLine.unsafeArgv
        var arguments: [String] = []
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let pointer = argv[index] else { continue }
            guard let argument = String(validatingCString: pointer) else {
                throw .badInput("argument \(index) is not UTF-8 text (\(shown(pointer))); "
                                + "Tether takes names, keys, values, paths and commands as UTF-8")
            }
            arguments.append(argument)
        }
        if let group = getenv("TETHER_GROUP"), String(validatingCString: group) == nil {
            throw .badInput("TETHER_GROUP is not UTF-8 text (\(shown(group))); Tether takes paths as UTF-8")
        }
        return arguments
    }

    /// Bytes that are not text, shown: printable ASCII as it is, the rest as
    /// \xNN (U+FFFD would hide which), the first 64.
    private static func shown(_ pointer: UnsafePointer<CChar>) -> String {
        var text = ""
        var byte = pointer
        for _ in 0..<64 {
            let value = UInt8(bitPattern: byte.pointee)
            guard value != 0 else { return text }
            text += (0x20..<0x7F).contains(value) && value != 0x5C ? String(UnicodeScalar(value))
                : "\\x" + (value < 0x10 ? "0" : "") + String(value, radix: 16)
            byte += 1
        }
        return text + "..."
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
