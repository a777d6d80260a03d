import TetherJSON
import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherGroup
import TetherIPC
import TetherLoop

/// `tether defaults`: the group's shared key-value settings.
struct Defaults: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults",
        abstract: "Read and write the defaults every process of the group shares.",
        discussion: """
            Values are JSON. Each change replaces GROUP/defaults.json atomically under a lock, \
            so concurrent writers never lose an update, and running extensions are told at once.
            """,
        subcommands: [Get.self, Set.self, Delete.self, List.self, WatchChanges.self]
    )

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the JSON value of KEY (exit 1 if it has none).")
        @Argument(help: "The key.") var key: String
        @OptionGroup var group: GroupOptions

        func run() throws {
            try SharedStore.validate(key: key)
            guard let value = try SharedStore.defaults(in: try group.open()).value(forKey: key) else {
                throw CLIError.refused("no value for key \(Defaults.quoted(key))")
            }
            output(value.description)
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set KEY to a JSON value.",
            discussion: #"Examples: tether defaults set theme '"dark"'; tether defaults set refresh.seconds 30; tether defaults set featured '["1042"]'"#)
        @Argument(help: "The key.") var key: String
        @Argument(help: ArgumentHelp("The value as JSON (a string needs its quotes).", valueName: "JSON")) var value: String
        @Flag(help: "The key belongs to the logged-in user: it is removed when a different user logs in.")
        var userScoped = false
        @OptionGroup var group: GroupOptions

        func run() throws {
            try SharedStore.validate(key: key)
            let parsed: JSONValue
            do {
                parsed = try JSONCodec.parse(Array(value.utf8))
            } catch {
                throw CLIError.badInput("the value is not JSON (\(error)); a string needs quotes, as in '\"dark\"'")
            }
            let directory = try group.open()
            if userScoped { try UserScopedData(group: directory).markKey(key) }
            try SharedStore.defaults(in: directory).set(parsed, forKey: key)
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Remove KEY (exit 1 if it had no value).")
        @Argument(help: "The key.") var key: String
        @OptionGroup var group: GroupOptions

        func run() throws {
            guard try SharedStore.defaults(in: try group.open()).removeValue(forKey: key) else {
                throw CLIError.refused("no value for key \(Defaults.quoted(key))")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Print every key and its JSON value, sorted by key.")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object of every key and value.") var json = false

        func run() throws {
            let values = try SharedStore.defaults(in: try group.open()).values()
            if json { return output(JSONValue.object(values).description) }
            // Keys as the file holds them, which the CLI would refuse: escaped.
            for key in values.keys.sorted() { output(PrintableText.escaped("\(key) = \((values[key] ?? .null).description)")) }
        }
    }

    struct WatchChanges: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "watch",
                                                        abstract: "Print the keys that change, one line per change, until interrupted.")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print each change as {\"changed\": [KEY, ...]}.") var json = false

        func run() throws {
            let store = try SharedStore.defaults(in: try group.open())
            switch try DefaultsWatchSession(store: store, json: json).run() {
            case .success(let code): if code != 0 { throw ExitCode(code) }
            case .failure(let error): throw error
            }
        }
    }

    static func quoted(_ key: String) -> String { "'\(key)'" }
}

/// Prints the keys whose values differ after each replacement of the file.
final class DefaultsWatchSession: LoopSession, @unchecked Sendable {
    let store: SharedStore
    let json: Bool
    private var values: [String: JSONValue] = [:]
    private var watcher: StoreWatcher?

    init(store: SharedStore, json: Bool) throws {
        self.store = store
        self.json = json
        try super.init()
    }

    override func start() {
        streamOutput()
        guard handleSignals([SIGINT, SIGTERM], { [unowned self] _ in self.finish(.success(0)) }) else { return }
        do {
            watcher = try StoreWatcher(loop: loop, paths: [store.path]) { [unowned self] _ in self.changed() }
            values = try store.values()
            output(json ? #"{"watching":true}"# : PrintableText.escaped("watching \(store.path)"))
        } catch {
            finish(.failure(CLIError(error)))
        }
    }

    private func changed() {
        do {
            let new = try store.values()
            let keys = SharedStore.changedKeys(from: values, to: new)
            values = new
            guard !keys.isEmpty else { return }
            output(json ? JSONValue.object(["changed": .array(keys.map { .string($0) })]).description : PrintableText.escaped("changed: \(keys.joined(separator: ", "))"))
        } catch {
            printError(error.description)
        }
    }

    override func willFinish() {
        watcher?.close()
    }
}
