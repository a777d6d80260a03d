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
            and removes the group's instance. Without a systemd user manager: exit 3, nothing changed. \
            Where a package put the templates (/usr/lib/systemd/user, or another of systemd's own directories \
            for user units), install writes only the drop-in and removes copies of the templates it wrote before; \
            'templates' writes them for such a package.
            """,
        subcommands: [Install.self, Uninstall.self, Status.self, Templates.self]
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
                hostArguments: try manifests.extensionsDir.flatMap { ["--extensions-dir", try ServiceCommand.placed($0)] }
                    + manifests.files.flatMap { ["--extension", try ServiceCommand.placed($0)] },
                watchdogSeconds: watchdog)
            let unitDirectory = try SystemctlUser.unitDirectory()
            let moved = try ServiceCommand.removeOldUnits(in: unitDirectory, group: directory.path)
            try SystemctlUser.makeDirectory("\(unitDirectory)/\(units.dropInDirectory)")
            // A package's templates serve as they are: copies of ours in
            // the user's directory would shadow them (each instance's
            // drop-in names its own executable either way).
            let packaged = SystemctlUser.packagedTemplates()
            var files = [("\(units.dropInDirectory)/\(ServiceUnits.dropInName)", units.dropIn)]
            if packaged == nil { files += [(ServiceUnits.socketTemplate, units.socket), (ServiceUnits.serviceTemplate, units.service)] }
            for (path, text) in files {
                do throws(GroupError) {
                    try AtomicFile.write(Array(text.utf8), to: "\(unitDirectory)/\(path)", mode: 0o644)
                } catch {
                    throw CLIError.environment(error.description)
                }
            }
            let shadowing = packaged == nil ? false : try ServiceCommand.removeOwnTemplates(in: unitDirectory)
            try SystemctlUser.run(["daemon-reload"])
            try SystemctlUser.run(["enable", "--now", units.socketName, units.serviceName])
            if moved {
                output("moved the single-group \(ServiceUnits.oldSocketName) and \(ServiceUnits.oldServiceName) over: "
                       + "stopped, disabled and removed")
            }
            if shadowing, let packaged {
                output("removed the copies of tether@.socket and tether@.service in \(unitDirectory): the package's in \(packaged) serve")
            }
            let templates = packaged.map { "the templates in \($0), the drop-in in \(unitDirectory)" } ?? unitDirectory
            output("installed \(units.socketName) and \(units.serviceName) (\(templates)): "
                   + "the host of \(directory.path) runs as a user service")
        }
    }

    struct Templates: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "templates",
            abstract: "Write the tether@ templates into a directory, for a package's /usr/lib/systemd/user.",
            discussion: "Nothing is enabled or started; 'install' then writes each group's drop-in beside them.")
        @Option(help: ArgumentHelp("Where to write tether@.socket and tether@.service; it must exist.", valueName: "DIR"))
        var directory: String
        @Option(help: ArgumentHelp("The tether the service runs (default: this one).", valueName: "PATH"))
        var executable: String?

        func validate() throws {
            guard executable.map({ $0.hasPrefix("/") }) ?? true else { throw ValidationError("--executable takes an absolute path") }
            for path in [directory, executable ?? ""] where ServiceUnits.holdsControlCharacter(path) {
                throw ValidationError("\(ServiceUnits.shown(path)) holds a control character, which a systemd unit cannot carry")
            }
        }

        func run() throws {
            let units = ServiceUnits(executable: executable ?? ownExecutable(), groupPath: "", instance: "", hostArguments: [])
            for (name, text) in [(ServiceUnits.socketTemplate, units.socket), (ServiceUnits.serviceTemplate, units.service)] {
                do throws(GroupError) {
                    try AtomicFile.write(Array(text.utf8), to: "\(directory)/\(name)", mode: 0o644)
                } catch {
                    throw CLIError.environment(error.description)
                }
            }
            output("wrote \(ServiceUnits.socketTemplate) and \(ServiceUnits.serviceTemplate) to \(directory)")
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
            if others.isEmpty { _ = try ServiceCommand.removeOwnTemplates(in: unitDirectory) }
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

    /// The templates `install` wrote to the user's directory, removed. True if there were any.
    static func removeOwnTemplates(in unitDirectory: String) throws -> Bool {
        var removed = false
        for name in [ServiceUnits.serviceTemplate, ServiceUnits.socketTemplate] {
            let path = "\(unitDirectory)/\(name)"
            guard let bytes = try? AtomicFile.read(path),
                  String(decoding: bytes, as: UTF8.self).hasPrefix(ServiceUnits.writtenMark) else { continue }
            if unlink(path) != 0, errno != ENOENT {
                throw CLIError.environment("cannot remove \(path): \(Errno(rawValue: errno))")
            }
            removed = true
        }
        return removed
    }

    static func open(_ group: GroupOptions) throws -> GroupDirectory {
        do { return try group.open() } catch { throw CLIError.environment(error.description) }
    }

    /// A path the unit names, made absolute here: systemd would read a
    /// relative one from its own working directory.
    static func placed(_ path: String) throws -> String {
        do { return try GroupDirectory.resolved(path) } catch { throw CLIError(error) }
    }

    /// The group's absolute path, made or not (uninstall and status make nothing).
    static func groupPath(_ group: GroupOptions) throws -> String {
        do {
            return try GroupDirectory.resolvePath(explicit: group.path, variable: ProcessEnvironment.value)
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
