import ArgumentParser
import TetherGroup
import TetherHost
import TetherIPC
import TetherJSON
import TetherLoop
import TetherManifest
import TetherSandbox

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Say what this machine enforces for extensions, and how to get what it does not.",
        discussion: """
            One line per mechanism (cgroup v2 and its delegation, the memory and pids \
            controllers, Landlock, seccomp, rlimits), each with its fix where there is one, \
            and whether an input method (ibus-daemon) answers for the keyboards. \
            Given manifests, also what each one asks for that cannot be enforced here: exit 1 \
            if any, 0 if none; a manifest that does not load exits 2. It changes nothing.
            """
    )

    @OptionGroup var group: GroupOptions

    @OptionGroup var manifests: ManifestOptions

    @Flag(help: "Print one JSON object: mechanisms, extensions and ok.")
    var json = false

    func run() throws {
        let findings = MachineEnforcement.findings(authority: ServiceManagerDelegation.delegates,
                                                    scopeControllers: ServiceManagerDelegation.scopeControllers) + [Self.inputMethod()]
        let (loaded, errors) = manifests.load()
        for error in errors { printError(error.description) }
        if !errors.isEmpty { throw ExitCode(2) }
        let groupPath = try GroupDirectory.resolvePath(explicit: group.path) { ProcessEnvironment.value($0) }
        let unenforced = loaded.map { ($0.name, Self.unenforced($0, group: groupPath, findings: findings)) }
        let ok = unenforced.allSatisfy { $0.1.isEmpty }
        // What a host started from here could run at once (it raises its
        // soft limit to the hard one, as doctor does here).
        let softLimit = DescriptorLimit.raise()
        let budget = DescriptorLimit.budget(connections: RPCServer.Limits.defaultMaximumConnections, softLimit: softLimit,
                                            features: Host.Configuration.defaultMaximumFeatures, manifests: loaded.count,
                                            worlds: ExtensionWorld.unavailable == nil)
        if json {
            output(JSONValue.object([
                "version": .string(TetherVersion.current),
                "descriptors": ["softLimit": .integer(softLimit), "clients": .integer(budget.clients),
                                "runningExtensions": .integer(budget.runningExtensions)],
                "mechanisms": .array(findings.map { finding -> JSONValue in
                    ["mechanism": .string(finding.mechanism), "enforced": .bool(finding.enforced),
                     "detail": .string(finding.detail), "fix": finding.fix.map { JSONValue.string($0) } ?? .null]
                }),
                "extensions": .array(unenforced.map { entry -> JSONValue in
                    ["name": .string(entry.0), "unenforced": .array(entry.1.map { JSONValue.string($0) })]
                }),
                "ok": .bool(ok),
            ]).description)
        } else {
            output("tether \(TetherVersion.current)")
            output("descriptors: a host started here could run \(budget.runningExtensions) extension(s) at once beside "
                   + "\(budget.clients) client(s) (descriptor limit \(softLimit); LimitNOFILE= or ulimit -n raises it)")
            for finding in findings {
                let name = finding.mechanism + String(repeating: " ", count: max(0, 9 - finding.mechanism.count))
                output("\(name) \(finding.enforced ? "yes" : "no ")  \(finding.detail)")
                if let fix = finding.fix { output("                fix: \(fix)") }
            }
            for (name, missing) in unenforced {
                output(missing.isEmpty ? "extension '\(name)': everything it asks for is enforced"
                       : "extension '\(name)': not enforced here: \(missing.joined(separator: "; "))")
            }
        }
        if !ok { throw ExitCode(1) }
    }

    /// Whether keyboards can be input methods here: an ibus-daemon answering.
    static func inputMethod() -> MachineEnforcement.Finding {
        switch InputMethodAddress.reachable() {
        case .success(let address):
            return MachineEnforcement.Finding(mechanism: "ibus", enforced: true,
                                              detail: "ibus-daemon answers at \(address): keyboards are engines tether:NAME",
                                              fix: nil)
        case .failure(let notFound):
            return MachineEnforcement.Finding(mechanism: "ibus", enforced: false,
                                              detail: "keyboards are no input method: \(notFound.reason)",
                                              fix: "start IBus (choose it in the desktop's input settings, or run ibus-daemon -d); "
                                                  + "a running host registers its keyboards within a second")
        }
    }

    /// What `manifest` asks for that this machine cannot enforce.
    static func unenforced(_ manifest: ExtensionManifest, group: String,
                           findings: [MachineEnforcement.Finding]) -> [String] {
        var policy = SandboxPolicy(role: manifest.role, openAccess: manifest.openAccess, group: group,
                                   temporaryDirectory: nil, memoryLimitMiB: manifest.memoryLimitMiB)
        policy.secrets = GroupDirectory.secretsPath(of: group)
        policy.hiddenTemporaryRoots = PrivateTemporaryDirectory.roots(base: ProcessEnvironment.value("TMPDIR"))
        var missing = Confinement(policy: policy).missing
        if manifest.memoryLimitMiB != nil, findings.first(where: { $0.mechanism == "memory" })?.enforced == false {
            missing.append("memory (RLIMIT_DATA alone does not count memfd or shared mappings)")
        }
        return missing
    }
}
