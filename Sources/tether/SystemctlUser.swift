import SystemPackage
import TetherGroup
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

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

    /// Where a package or an administrator puts user units (systemd.unit(5)'s
    /// search path for user units, less the user's own), in systemd's order.
    static let systemUnitDirectories = ["/etc/xdg/systemd/user", "/etc/systemd/user", "/run/systemd/user", "/usr/local/share/systemd/user",
                                        "/usr/share/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user"]

    /// The directory of the system's own `tether@` templates (a package's), if any.
    static func packagedTemplates() -> String? {
        systemUnitDirectories.first { directory in
            [ServiceUnits.socketTemplate, ServiceUnits.serviceTemplate].allSatisfy { name in
                var status = stat()
                return stat("\(directory)/\(name)", &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
            }
        }
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
