import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherGroup
import TetherIPC
import SystemPackage
import TetherManifest

/// Who this extension is and where its group lives: from the environment a
/// host gives its children, or from the command line when started by hand.
public struct ExtensionIdentity: Sendable {
    /// Its name, `[a-z0-9][a-z0-9._-]{0,63}`.
    public let name: String
    /// Widget, keyboard or notification.
    public let role: ExtensionRole
    /// The group directory it shares with the host and the other extensions.
    public let group: GroupDirectory
    /// The host's socket in the group, for an extension started by hand.
    let socketPath: String
    /// The link the host that launched this process handed it (descriptor
    /// 3, `TETHER_HOST_FD`), checked with the kernel; nil when started by hand.
    let hostLink: Int32?
    /// The host that started this process, if one did. Such an extension
    /// ends with its host; one started by hand outlives hosts and re-attaches.
    let parentHostPID: Int32?
    /// Open access as far as this process knows before the host answers.
    public let openAccess: Bool
    /// The command-line arguments left after the SDK's own options.
    public let arguments: [String]

    /// Launched by a host (which handed it its link), not started by hand.
    public var isManaged: Bool { parentHostPID != nil }

    /// Reads `--group DIR` and `--name NAME` from `arguments` (the rest is
    /// left for the extension), then the host's variables: `TETHER_GROUP`,
    /// `TETHER_HOST_FD`, `TETHER_EXTENSION`, `TETHER_ROLE`, `TETHER_HOST_PID`,
    /// `TETHER_OPEN_ACCESS`. The default name is `defaultName` (an embedded
    /// manifest's), else the executable's file name in lower case.
    static func resolve(role: ExtensionRole, arguments: [String], environment: [String: String],
                               defaultName: String? = nil) throws(ExtensionError) -> ExtensionIdentity {
        try resolve(role: role, arguments: arguments, variable: { environment[$0] }, defaultName: defaultName)
    }

    /// The same, reading variables one at a time (`ProcessEnvironment.value`
    /// at start-up, which then builds no dictionary of the environment).
    static func resolve(role: ExtensionRole, arguments: [String], variable: (String) -> String?,
                               defaultName: String? = nil) throws(ExtensionError) -> ExtensionIdentity {
        var rest: [String] = []
        var groupOption: String?
        var nameOption: String?
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--group" || argument == "--name" {
                guard index + 1 < arguments.count else { throw .refused("\(argument) needs a value") }
                if argument == "--group" { groupOption = arguments[index + 1] } else { nameOption = arguments[index + 1] }
                index += 2
                continue
            }
            rest.append(argument)
            index += 1
        }
        let executableName = arguments.first.flatMap { FilePath($0).lastComponent?.string } ?? role.rawValue
        let name = nameOption ?? variable("TETHER_EXTENSION") ?? defaultName ?? executableName.lowercased()
        guard FeatureName.isValid(name) else { throw .invalidName(name) }
        if let declared = variable("TETHER_ROLE"), declared != role.rawValue {
            throw .refused("the manifest of '\(name)' says role '\(declared)', but this executable is a \(role.rawValue)")
        }
        let group: GroupDirectory
        do {
            group = try GroupDirectory(path: try GroupDirectory.resolvePath(explicit: groupOption, variable: variable))
        } catch {
            throw .environment(error.description)
        }
        // Managed only with a link the kernel says that host made (a
        // wrapper script's child has it too); a shell that exported the
        // variables does not make us managed.
        let hostPID = variable("TETHER_HOST_PID").flatMap { Int32($0) }
        let link = hostPID.flatMap { pid in
            variable(LaunchLink.variable).flatMap { Int32($0) }.flatMap { LaunchLink.inherited($0, from: pid) }
        }
        return ExtensionIdentity(
            name: name, role: role, group: group, socketPath: group.socketPath, hostLink: link,
            parentHostPID: link != nil ? hostPID : nil,
            openAccess: variable("TETHER_OPEN_ACCESS") == "1", arguments: rest)
    }
}
