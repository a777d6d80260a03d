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
            'install' writes tether.socket and tether.service to $XDG_CONFIG_HOME/systemd/user \
            (default ~/.config/systemd/user), then reloads the user manager and enables and starts \
            both; the first client of the group's socket starts the host. 'status' says what runs \
            and whether its cgroup is delegated; 'uninstall' stops, disables and removes both. \
            Without a systemd user manager: exit 3, nothing changed.
            """,
        subcommands: [Install.self, Uninstall.self, Status.self]
    )

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install", abstract: "Write, enable and start tether.socket and tether.service.")
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
            let directory = try open()
            let units = ServiceUnits(
                executable: ownExecutable(), groupPath: directory.path,
                hostArguments: manifests.extensionsDir.flatMap { ["--extensions-dir", absolutePath($0)] }
                    + manifests.files.flatMap { ["--extension", absolutePath($0)] },
                watchdogSeconds: watchdog)
            let unitDirectory = try SystemctlUser.unitDirectory()
            for (name, text) in [(ServiceUnits.socketName, units.socket), (ServiceUnits.serviceName, units.service)] {
                do throws(GroupError) {
                    try AtomicFile.write(Array(text.utf8), to: "\(unitDirectory)/\(name)", mode: 0o644)
                } catch {
                    throw CLIError.environment("cannot write \(unitDirectory)/\(name): \(error)")
                }
            }
            try SystemctlUser.run(["daemon-reload"])
            try SystemctlUser.run(["enable", "--now", ServiceUnits.socketName, ServiceUnits.serviceName])
            output("installed \(ServiceUnits.socketName) and \(ServiceUnits.serviceName) in \(unitDirectory): "
                   + "the host of \(directory.path) runs as a user service")
        }

        private func open() throws -> GroupDirectory {
            do { return try group.open() } catch { throw CLIError.environment(error.description) }
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "uninstall", abstract: "Stop, disable and remove tether.socket and tether.service.")

        func run() throws {
            try SystemctlUser.reachable()
            let unitDirectory = try SystemctlUser.unitDirectory()
            try SystemctlUser.run(["disable", "--now", ServiceUnits.serviceName, ServiceUnits.socketName])
            for name in [ServiceUnits.serviceName, ServiceUnits.socketName] {
                if unlink("\(unitDirectory)/\(name)") != 0, errno != ENOENT {
                    throw CLIError.environment("cannot remove \(unitDirectory)/\(name): \(Errno(rawValue: errno))")
                }
            }
            try SystemctlUser.run(["daemon-reload"])
            output("removed \(ServiceUnits.socketName) and \(ServiceUnits.serviceName)")
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "What the user service runs, and whether its cgroup is delegated.")
        @Flag(help: "Print one JSON object.") var json = false

        func run() throws {
            try SystemctlUser.reachable()
            let service = try SystemctlUser.properties(ServiceUnits.serviceName)
            let socket = try SystemctlUser.properties(ServiceUnits.socketName)
            let installed = service["LoadState"] == "loaded"
            let pid = service["MainPID"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
            let delegated = service["Delegate"] == "yes"
            if json {
                var object: [String: JSONValue] = [
                    "installed": .bool(installed), "service": .string(service["ActiveState"] ?? "unknown"),
                    "socket": .string(socket["ActiveState"] ?? "unknown"), "delegated": .bool(delegated),
                ]
                if let pid { object["pid"] = .integer(Int64(pid)) }
                if let cgroup = service["ControlGroup"], !cgroup.isEmpty { object["cgroup"] = .string(cgroup) }
                return try printJSON(JSONValue.object(object))
            }
            guard installed else { return output("not installed (tether service install)") }
            let running = pid.map { ", pid \($0)" } ?? ""
            let controllers = service["DelegateControllers"].map { $0.isEmpty ? "" : " (\($0))" } ?? ""
            output("\(ServiceUnits.serviceName): \(service["ActiveState"] ?? "?") (\(service["SubState"] ?? "?"))\(running); "
                   + "\(ServiceUnits.socketName): \(socket["ActiveState"] ?? "?"); "
                   + (delegated ? "cgroup delegated\(controllers)" : "cgroup not delegated"))
        }
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

    /// The unit's properties that status reads.
    static func properties(_ unit: String) throws -> [String: String] {
        let result = try call(["show", unit, "--property=LoadState,ActiveState,SubState,MainPID,ControlGroup,Delegate,DelegateControllers"])
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
