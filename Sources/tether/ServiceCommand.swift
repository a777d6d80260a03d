import ArgumentParser
import SystemPackage
import TetherGroup
import TetherJSON
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

struct ServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Run the host as a systemd user service: started by its socket, its cgroup delegated.",
        discussion: """
            'install' writes the templates tether@.socket and tether@.service to \
            $XDG_CONFIG_HOME/systemd/user (default ~/.config/systemd/user) and a drop-in for the \
            group's instance (its path, as systemd-escape --path names it), then reloads the user \
            manager and enables and starts the instance; the first client of the group's socket \
            starts the host. Each group is an instance of its own: a second group gets a second host. \
            'status' says what runs and whether its cgroup is delegated; 'uninstall' stops, disables \
            and removes the group's instance. Without a systemd user manager: exit 3, nothing changed.
            """,
        subcommands: [Install.self, Uninstall.self, Status.self]
    )

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install", abstract: "Write, enable and start the group's tether@ socket and service.")
        @OptionGroup var group: GroupOptions
        @OptionGroup var manifests: ManifestOptions
        @Option(help: ArgumentHelp("The service's WatchdogSec= (0: none); the host pings at half of it.", valueName: "SECONDS"))
        var watchdog = ServiceUnits.defaultWatchdogSeconds

        func validate() throws {
            guard (0...86_400).contains(watchdog) else { throw ValidationError("--watchdog takes 0 to 86400 seconds") }
        }

        func run() throws {
            // A unit file is lines: a control character in a path (a
            // newline) would be written into it and the unit never load.
            let groupPath = try? GroupDirectory.resolvePath(explicit: group.path, variable: ProcessEnvironment.value)
            let paths: [String] = [groupPath ?? "", ownExecutable()] + manifests.extensionsDir + manifests.files
            if let bad = paths.first(where: { ServiceUnits.holdsControlCharacter($0) }) {
                throw CLIError.badInput("\(ServiceUnits.shown(bad)) holds a control character, which a systemd unit cannot carry: "
                                        + "rename it, or run tether host from a shell")
            }
            try SystemctlUser.reachable()
            let directory = try ServiceCommand.open(group)
            let units = ServiceUnits(
                executable: ownExecutable(), groupPath: directory.path, instance: try SystemctlUser.escapedPath(directory.path),
                hostArguments: manifests.extensionsDir.flatMap { ["--extensions-dir", absolutePath($0)] }
                    + manifests.files.flatMap { ["--extension", absolutePath($0)] },
                watchdogSeconds: watchdog)
            let unitDirectory = try SystemctlUser.unitDirectory()
            let moved = try ServiceCommand.removeOldUnits(in: unitDirectory, group: directory.path)
            try SystemctlUser.makeDirectory("\(unitDirectory)/\(units.dropInDirectory)")
            for (path, text) in [(ServiceUnits.socketTemplate, units.socket), (ServiceUnits.serviceTemplate, units.service),
                                 ("\(units.dropInDirectory)/\(ServiceUnits.dropInName)", units.dropIn)] {
                do throws(GroupError) {
                    try AtomicFile.write(Array(text.utf8), to: "\(unitDirectory)/\(path)", mode: 0o644)
                } catch {
                    throw CLIError.environment("cannot write \(unitDirectory)/\(path): \(error)")
                }
            }
            try SystemctlUser.run(["daemon-reload"])
            try SystemctlUser.run(["enable", "--now", units.socketName, units.serviceName])
            if moved {
                output("moved the single-group \(ServiceUnits.oldSocketName) and \(ServiceUnits.oldServiceName) over: "
                       + "stopped, disabled and removed")
            }
            output("installed \(units.socketName) and \(units.serviceName) in \(unitDirectory): "
                   + "the host of \(directory.path) runs as a user service")
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "uninstall", abstract: "Stop, disable and remove the group's tether@ socket and service.")
        @OptionGroup var group: GroupOptions

        func run() throws {
            try SystemctlUser.reachable()
            let path = try ServiceCommand.groupPath(group)
            let instance = try SystemctlUser.escapedPath(path)
            let socket = "tether@\(instance).socket", service = "tether@\(instance).service"
            let unitDirectory = try SystemctlUser.unitDirectory()
            try SystemctlUser.run(["disable", "--now", service, socket])
            let dropIns = "\(unitDirectory)/\(service).d"
            if unlink("\(dropIns)/\(ServiceUnits.dropInName)") != 0, errno != ENOENT {
                throw CLIError.environment("cannot remove \(dropIns)/\(ServiceUnits.dropInName): \(Errno(rawValue: errno))")
            }
            _ = rmdir(dropIns)
            // The templates go with the last instance that needs them.
            let others = SystemctlUser.names(in: unitDirectory).filter { $0.hasPrefix("tether@") && $0.hasSuffix(".service.d") }
            if others.isEmpty {
                for name in [ServiceUnits.serviceTemplate, ServiceUnits.socketTemplate] {
                    if unlink("\(unitDirectory)/\(name)") != 0, errno != ENOENT {
                        throw CLIError.environment("cannot remove \(unitDirectory)/\(name): \(Errno(rawValue: errno))")
                    }
                }
            }
            _ = try ServiceCommand.removeOldUnits(in: unitDirectory, group: path)
            try SystemctlUser.run(["daemon-reload"])
            output("removed \(socket) and \(service)")
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "What the group's user service runs, and whether its cgroup is delegated.")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object.") var json = false

        func run() throws {
            try SystemctlUser.reachable()
            let instance = try SystemctlUser.escapedPath(try ServiceCommand.groupPath(group))
            let serviceName = "tether@\(instance).service", socketName = "tether@\(instance).socket"
            let service = try SystemctlUser.properties(serviceName)
            let socket = try SystemctlUser.properties(socketName)
            let installed = service["LoadState"] == "loaded" && service["UnitFileState"].map { $0 != "" && $0 != "disabled" } == true
            let pid = service["MainPID"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
            let delegated = service["Delegate"] == "yes"
            if json {
                var object: [String: JSONValue] = [
                    "installed": .bool(installed), "unit": .string(serviceName), "service": .string(service["ActiveState"] ?? "unknown"),
                    "socket": .string(socket["ActiveState"] ?? "unknown"), "delegated": .bool(delegated),
                ]
                if let pid { object["pid"] = .integer(Int64(pid)) }
                if let cgroup = service["ControlGroup"], !cgroup.isEmpty { object["cgroup"] = .string(cgroup) }
                return try printJSON(JSONValue.object(object))
            }
            guard installed else { return output("not installed (tether service install)") }
            let running = pid.map { ", pid \($0)" } ?? ""
            let controllers = service["DelegateControllers"].map { $0.isEmpty ? "" : " (\($0))" } ?? ""
            output("\(serviceName): \(service["ActiveState"] ?? "?") (\(service["SubState"] ?? "?"))\(running); "
                   + "\(socketName): \(socket["ActiveState"] ?? "?"); "
                   + (delegated ? "cgroup delegated\(controllers)" : "cgroup not delegated"))
        }
    }

    static func open(_ group: GroupOptions) throws -> GroupDirectory {
        do { return try group.open() } catch { throw CLIError.environment(error.description) }
    }

    /// The group's absolute path, made or not (uninstall and status make nothing).
    static func groupPath(_ group: GroupOptions) throws -> String {
        do {
            return absolutePath(try GroupDirectory.resolvePath(explicit: group.path, variable: ProcessEnvironment.value))
        } catch {
            throw CLIError.environment(error.description)
        }
    }

    /// The single-group units an install before templates wrote for
    /// `group`: stopped, disabled and removed. True if there were any. Those
    /// of another group stay (that group's install moves them).
    static func removeOldUnits(in unitDirectory: String, group: String) throws -> Bool {
        let service = "\(unitDirectory)/\(ServiceUnits.oldServiceName)"
        guard let bytes = try? AtomicFile.read(service) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        let ownGroup = ServiceUnits.quoted("--group") + " " + ServiceUnits.quoted(group)
        guard text.contains("Written by tether service install"), text.contains(ownGroup) else { return false }
        try? SystemctlUser.run(["disable", "--now", ServiceUnits.oldServiceName, ServiceUnits.oldSocketName])
        for name in [ServiceUnits.oldServiceName, ServiceUnits.oldSocketName] {
            if unlink("\(unitDirectory)/\(name)") != 0, errno != ENOENT {
                throw CLIError.environment("cannot remove \(unitDirectory)/\(name): \(Errno(rawValue: errno))")
            }
        }
        return true
    }
}

/// `systemctl --user`, the user's service manager as its own tool speaks to it.
enum SystemctlUser {
    /// Throws, in one line, where no user manager answers.
    static func reachable() throws {
        let result = try call(["show-environment"])
        guard result.status == 0 else {
            throw CLIError.environment("no systemd user manager answers (systemctl --user: \(result.error)); nothing was changed")
        }
    }

    static func run(_ arguments: [String]) throws {
        let result = try call(arguments)
        guard result.status == 0 else {
            throw CLIError.environment("systemctl --user \(arguments.joined(separator: " ")) failed: \(result.error)")
        }
    }

    /// `path` as a unit's instance names it (`systemd-escape --path`: systemd's own rules).
    static func escapedPath(_ path: String) throws -> String {
        let result: CommandOutput
        do {
            result = try CommandOutput.run("systemd-escape", ["--path", path])
        } catch {
            throw CLIError.environment("cannot run systemd-escape (\(error)): no systemd here; nothing was changed")
        }
        let escaped = String(decoding: result.standardOutput, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard result.status.shellCode == 0, !escaped.isEmpty else {
            throw CLIError.environment("systemd-escape --path \(ServiceUnits.shown(path)) failed; nothing was changed")
        }
        return escaped
    }

    /// The entries of a directory of units (none if it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A directory of user units (a drop-in's), 0700 where missing.
    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw CLIError.environment("cannot make \(path): \(Errno(rawValue: errno))")
        }
    }

    /// The unit's properties that status reads.
    static func properties(_ unit: String) throws -> [String: String] {
        let result = try call(["show", unit, "--property=LoadState,UnitFileState,ActiveState,SubState,MainPID,ControlGroup,Delegate,DelegateControllers"])
        var properties: [String: String] = [:]
        for line in result.output.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return properties
    }

    /// `${XDG_CONFIG_HOME:-~/.config}/systemd/user`, each level made 0700 where missing.
    static func unitDirectory() throws -> String {
        let base: String
        if let config = ProcessEnvironment.value("XDG_CONFIG_HOME"), config.hasPrefix("/") {
            base = config
        } else if let home = ProcessEnvironment.value("HOME"), home.hasPrefix("/") {
            base = home + "/.config"
        } else {
            throw CLIError.environment("neither XDG_CONFIG_HOME nor HOME is set: no place for user units")
        }
        var path = ""
        for component in [base, "systemd", "user"] {
            path += path.isEmpty ? component : "/" + component
            if mkdir(path, 0o700) != 0, errno != EEXIST {
                throw CLIError.environment("cannot make \(path): \(Errno(rawValue: errno))")
            }
        }
        return path
    }

    private static func call(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let result: CommandOutput
        do {
            result = try CommandOutput.run("systemctl", ["--user"] + arguments)
        } catch {
            throw CLIError.environment("cannot run systemctl (\(error)): no systemd here; nothing was changed")
        }
        let error = String(decoding: result.standardError, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return (result.status.shellCode, String(decoding: result.standardOutput, as: UTF8.self), error)
    }
}
