import TetherJSON

/// An extension's manifest (`*.extension.json`), the Info.plist of an
/// extension: what to run, in which role, and how to restart it.
package struct ExtensionManifest: Sendable, Equatable {
    package typealias Role = ExtensionRole

    package enum RestartPolicy: String, Sendable, CaseIterable {
        case always
        case onFailure = "on-failure"
        case never
    }

    /// When the host runs it: with the host, or when work for it arrives.
    package enum Activation: String, Sendable, CaseIterable {
        case always
        case onDemand = "on-demand"

        /// iOS launches a notification service extension per push; widgets
        /// and keyboards are around while their host shows them.
        package static func `default`(for role: Role) -> Activation { role == .notification ? .onDemand : .always }
    }

    package static let defaultIdleTimeoutMilliseconds: UInt64 = 30_000
    package static let defaultWatchdogMilliseconds: UInt64 = 10_000
    /// EX_CONFIG: the extension says it cannot run as configured.
    package static let defaultNoRestartExitCodes: [Int32] = [78]

    package var name: String
    package var role: Role
    /// Absolute path of the executable.
    package var executable: String
    package var arguments: [String]
    package var restart: RestartPolicy
    package var openAccess: Bool
    package var activation: Activation
    /// On-demand only: ended after this long with no request in flight.
    package var idleTimeoutMilliseconds: UInt64
    /// The ping period; 0 turns the watchdog off.
    package var watchdogMilliseconds: UInt64
    /// Exit codes that mean "do not restart me": the extension is marked failed.
    package var noRestartExitCodes: [Int32]
    /// Its memory ceiling (`RLIMIT_DATA`), MiB; nil for none (`0` in the file).
    package var memoryLimitMiB: Int?
    /// The most its private temporary directory may hold, MiB, and the
    /// largest file it may write anywhere (`RLIMIT_FSIZE`).
    package var diskLimitMiB: Int
    /// Enough for any extension's cache, less than a small tmpfs holds.
    package static let defaultDiskLimitMiB = 256
    /// Notification role: whether what it delivers is shown on the desktop
    /// (org.freedesktop.Notifications); false for one that shows it itself.
    package var showOnDesktop: Bool
    /// The name people see (an input method's list of keyboards); nil:
    /// the name.
    package var displayName: String?
    /// Keyboard role: the language it types (`en`, `de_CH`), for the input
    /// method's list; nil for none said.
    package var language: String?
    /// The manifest file this came from.
    package var source: String

    package init(name: String, role: Role, executable: String, arguments: [String] = [],
                 restart: RestartPolicy = .onFailure, openAccess: Bool = false, activation: Activation? = nil,
                 idleTimeoutMilliseconds: UInt64 = ExtensionManifest.defaultIdleTimeoutMilliseconds,
                 watchdogMilliseconds: UInt64 = ExtensionManifest.defaultWatchdogMilliseconds,
                 noRestartExitCodes: [Int32] = ExtensionManifest.defaultNoRestartExitCodes,
                 memoryLimitMiB: Int?? = nil, diskLimitMiB: Int = ExtensionManifest.defaultDiskLimitMiB,
                 showOnDesktop: Bool = true, displayName: String? = nil, language: String? = nil, source: String) {
        self.name = name
        self.role = role
        self.executable = executable
        self.arguments = arguments
        self.restart = restart
        self.openAccess = openAccess
        self.activation = activation ?? .default(for: role)
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.watchdogMilliseconds = watchdogMilliseconds
        self.noRestartExitCodes = noRestartExitCodes
        self.memoryLimitMiB = memoryLimitMiB ?? role.defaultMemoryLimitMiB
        self.diskLimitMiB = diskLimitMiB
        self.showOnDesktop = showOnDesktop
        self.displayName = displayName
        self.language = language
        self.source = source
    }

    /// Checks a manifest's fields without touching the file system: the
    /// executable is returned as written. The build-time check (the
    /// TetherManifest plugin) and `load` share it, so both refuse the same.
    package static func parse(_ bytes: [UInt8], file path: String) throws(ManifestError) -> ExtensionManifest {
        let object: [String: JSONValue]
        do {
            guard case .object(let parsed) = try JSONCodec.parse(bytes) else {
                throw ManifestError(file: path, field: nil, problem: "is not a JSON object")
            }
            object = parsed
        } catch let error as ManifestError {
            throw error
        } catch {
            throw ManifestError(file: path, field: nil, problem: "is not valid JSON")
        }
        let known: Set = ["name", "role", "executable", "arguments", "restart", "openAccess", "activation",
                          "idleTimeout", "watchdog", "noRestartExitCodes", "memoryLimitMiB", "diskLimitMiB", "showOnDesktop",
                          "displayName", "language"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ManifestError(file: path, field: unknown,
                                problem: "is not a manifest field; use \(known.sorted().joined(separator: ", "))")
        }

        func string(_ field: String) throws(ManifestError) -> String {
            guard let value = object[field] else { throw ManifestError(file: path, field: field, problem: "is missing") }
            guard let text = value.stringValue else { throw ManifestError(file: path, field: field, problem: "must be a string") }
            return text
        }
        /// One of `Choice`'s raw values, or `fallback` when the field is absent.
        func choice<Choice: RawRepresentable<String>>(_ field: String, or fallback: Choice,
                                                      _ problem: String) throws(ManifestError) -> Choice {
            guard let value = object[field] else { return fallback }
            guard let text = value.stringValue, let chosen = Choice(rawValue: text) else {
                throw ManifestError(file: path, field: field, problem: problem)
            }
            return chosen
        }

        let name = try string("name")
        guard TetherName.isValid(name) else {
            throw ManifestError(file: path, field: "name",
                                problem: "must be 1-64 of a-z 0-9 . _ - starting with a letter or digit")
        }
        let roleText = try string("role")
        guard let role = Role(rawValue: roleText) else {
            throw ManifestError(file: path, field: "role",
                                problem: "'\(roleText)' is not a role; use widget, keyboard or notification")
        }
        let executable = try string("executable")
        guard !executable.isEmpty else { throw ManifestError(file: path, field: "executable", problem: "is empty") }

        var arguments: [String] = []
        if let value = object["arguments"] {
            guard let list = value.arrayValue, case let strings = list.compactMap(\.stringValue),
                  strings.count == list.count else {
                throw ManifestError(file: path, field: "arguments", problem: "must be an array of strings")
            }
            arguments = strings
        }
        let restart = try choice("restart", or: RestartPolicy.onFailure, "must be always, on-failure or never")
        var openAccess = false
        if let value = object["openAccess"] {
            guard let flag = value.boolValue else {
                throw ManifestError(file: path, field: "openAccess", problem: "must be true or false")
            }
            openAccess = flag
        }
        let activation = try choice("activation", or: Activation.default(for: role), "must be always or on-demand")
        var idleTimeout = defaultIdleTimeoutMilliseconds
        if let value = object["idleTimeout"] {
            guard activation == .onDemand else {
                throw ManifestError(file: path, field: "idleTimeout",
                                    problem: "applies only to \"activation\": \"on-demand\"")
            }
            guard let milliseconds = milliseconds(value), milliseconds >= 100 else {
                throw ManifestError(file: path, field: "idleTimeout", problem: "must be seconds from 0.1 to 86400")
            }
            idleTimeout = milliseconds
        }
        var watchdog = defaultWatchdogMilliseconds
        if let value = object["watchdog"] {
            // A ping more often than every 100 ms would be the host's main work.
            guard let milliseconds = milliseconds(value), milliseconds == 0 || milliseconds >= 100 else {
                throw ManifestError(file: path, field: "watchdog", problem: "must be 0 (off) or seconds from 0.1 to 86400")
            }
            watchdog = milliseconds
        }
        var noRestart = defaultNoRestartExitCodes
        if let value = object["noRestartExitCodes"] {
            guard let list = value.arrayValue,
                  case let codes = list.compactMap({ $0.intValue.flatMap { (1...255).contains($0) ? Int32($0) : nil } }),
                  codes.count == list.count else {
                throw ManifestError(file: path, field: "noRestartExitCodes", problem: "must be an array of exit codes from 1 to 255")
            }
            noRestart = codes
        }
        var memoryLimit: Int? = role.defaultMemoryLimitMiB
        if let value = object["memoryLimitMiB"] {
            // Under 16 MiB not even a shell script's runtime starts.
            guard let mib = value.intValue, mib == 0 || (16...1_048_576).contains(mib) else {
                throw ManifestError(file: path, field: "memoryLimitMiB",
                                    problem: "must be 0 (no limit) or MiB from 16 to 1048576")
            }
            memoryLimit = mib == 0 ? nil : mib
        }
        var diskLimit = defaultDiskLimitMiB
        if let value = object["diskLimitMiB"] {
            guard let mib = value.intValue, (1...1_048_576).contains(mib) else {
                throw ManifestError(file: path, field: "diskLimitMiB", problem: "must be MiB from 1 to 1048576")
            }
            diskLimit = mib
        }
        var showOnDesktop = true
        if let value = object["showOnDesktop"] {
            guard role == .notification else {
                throw ManifestError(file: path, field: "showOnDesktop", problem: "applies only to the notification role")
            }
            guard let flag = value.boolValue else {
                throw ManifestError(file: path, field: "showOnDesktop", problem: "must be true or false")
            }
            showOnDesktop = flag
        }
        var displayName: String?
        if let value = object["displayName"] {
            guard let text = value.stringValue, (1...64).contains(text.utf8.count),
                  !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw ManifestError(file: path, field: "displayName", problem: "must be text of 1 to 64 bytes, no control characters")
            }
            displayName = text
        }
        var language: String?
        if let value = object["language"] {
            guard role == .keyboard else {
                throw ManifestError(file: path, field: "language", problem: "applies only to the keyboard role")
            }
            guard let text = value.stringValue, isLanguage(text) else {
                throw ManifestError(file: path, field: "language", problem: "must be a language code such as en or de_CH")
            }
            language = text
        }
        return ExtensionManifest(name: name, role: role, executable: executable, arguments: arguments,
                                 restart: restart, openAccess: openAccess, activation: activation,
                                 idleTimeoutMilliseconds: idleTimeout, watchdogMilliseconds: watchdog,
                                 noRestartExitCodes: noRestart, memoryLimitMiB: .some(memoryLimit),
                                 diskLimitMiB: diskLimit, showOnDesktop: showOnDesktop, displayName: displayName,
                                 language: language, source: path)
    }

    /// `ll`, `lll`, or either with `_` or `-` and a region or script (2 to 8 letters or digits).
    private static func isLanguage(_ text: String) -> Bool {
        let parts = text.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false) }
        guard (1...2).contains(parts.count), (2...3).contains(parts[0].count),
              parts[0].unicodeScalars.allSatisfy({ ("a"..."z").contains($0) }) else { return false }
        guard parts.count == 2 else { return true }
        return (2...8).contains(parts[1].count)
            && parts[1].unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// A duration in seconds (fractions allowed) as milliseconds; nil unless 0...86400.
    private static func milliseconds(_ value: JSONValue) -> UInt64? {
        guard let seconds = value.doubleValue, seconds >= 0, seconds <= 86_400 else { return nil }
        return UInt64(exactly: (seconds * 1000).rounded())
    }

    /// The manifest as JSON, in the contract's field names: what `parse`
    /// reads back as the same manifest (the build plugin embeds this, and
    /// `EXECUTABLE --manifest` prints it for the host).
    package var jsonValue: JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name), "role": .string(role.rawValue), "executable": .string(executable),
            "arguments": .array(arguments.map { .string($0) }), "restart": .string(restart.rawValue),
            "openAccess": .bool(openAccess), "activation": .string(activation.rawValue),
            "watchdog": .double(Double(watchdogMilliseconds) / 1000),
            "noRestartExitCodes": .array(noRestartExitCodes.map { .integer($0) }),
            "memoryLimitMiB": .integer(memoryLimitMiB ?? 0), "diskLimitMiB": .integer(diskLimitMiB),
        ]
        // Only on-demand extensions have one: `parse` refuses it elsewhere.
        if activation == .onDemand { object["idleTimeout"] = .double(Double(idleTimeoutMilliseconds) / 1000) }
        if role == .notification { object["showOnDesktop"] = .bool(showOnDesktop) }
        if let displayName { object["displayName"] = .string(displayName) }
        if let language { object["language"] = .string(language) }
        return .object(object)
    }
}
