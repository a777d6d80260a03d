#if canImport(Glibc)
import Glibc
#endif
import Logging
import SystemPackage
import TetherJSON
import TetherSandbox

/// The host's side of confinement: for each launch, the extension's private
/// temporary directory (`TMPDIR/tether-UID/G/NAME.XXXXXX`, its `TMPDIR`) and its
/// confinement by role (TetherSandbox), applied by the spawn's child just
/// before exec. One per host: it says once which protections this kernel
/// lacks, and with `--require-sandbox` refuses to launch without them.
final class ExtensionSandbox {
    let required: Bool
    private let groupPath: String
    /// The host's own TMPDIR (or nil: /tmp), under which its extensions' go.
    private let temporaryBase: String?
    private let support: KernelSupport
    private let logger: Logger
    private var reported: Set<String> = []

    init(group: String, required: Bool, temporaryBase: String?, support: KernelSupport = .current, logger: Logger) {
        groupPath = group
        self.temporaryBase = temporaryBase
        self.required = required
        self.support = support
        self.logger = logger
    }

    /// `BASE/tether-UID/HASH-OF-GROUP`, checked each time: no extension can
    /// write there (not even one with the group open to it).
    private func temporaryParent() throws(Errno) -> String {
        try PrivateTemporaryDirectory.hostParent(group: groupPath, base: temporaryBase)
    }

    /// Leftovers of a host that was killed before it could remove them: the
    /// caller holds the host lock, so no extension of this group uses them.
    func removeLeftovers(of manifests: [ExtensionManifest]) {
        guard let parent = try? temporaryParent() else { return }
        for manifest in manifests {
            PrivateTemporaryDirectory.removeLeftovers(in: parent, prefix: manifest.name)
        }
    }

    /// At start: what hosts of groups that no longer exist left (no host
    /// will ever run there again to remove it).
    func removeOrphans() {
        PrivateTemporaryDirectory.removeOrphans(base: temporaryBase)
    }

    /// At shutdown, after `removeLeftovers`: the group's directory too, if
    /// empty, so a stopped host leaves nothing in the temporary directory.
    func removeParentIfEmpty() {
        PrivateTemporaryDirectory.removeHostParentIfEmpty(group: groupPath, base: temporaryBase)
    }

    func policy(for manifest: ExtensionManifest, temporaryDirectory: String?) -> SandboxPolicy {
        SandboxPolicy(role: manifest.role, openAccess: manifest.openAccess, group: groupPath,
                      temporaryDirectory: temporaryDirectory, memoryLimitMiB: manifest.memoryLimitMiB)
    }

    /// What would confine it, before it first runs.
    func expectedReport(for manifest: ExtensionManifest) -> SandboxReport {
        Confinement(policy: policy(for: manifest, temporaryDirectory: nil), support: support).report
    }

    /// A launch's temporary directory and confinement. Throws `.refused`
    /// under `--require-sandbox` when a protection is missing.
    func prepare(_ manifest: ExtensionManifest) throws(SandboxRefusal) -> (Confinement, temporaryDirectory: String) {
        let temporary: String
        do {
            temporary = try PrivateTemporaryDirectory.make(in: temporaryParent(), prefix: manifest.name)
        } catch {
            throw .noTemporaryDirectory(error)
        }
        let confinement = Confinement(policy: policy(for: manifest, temporaryDirectory: temporary), support: support)
        if !confinement.missing.isEmpty {
            if required {
                try? PrivateTemporaryDirectory.remove(temporary)
                throw .missing(confinement.missing)
            }
            let new = confinement.missing.filter { !reported.contains($0) }
            if !new.isEmpty {
                reported.formUnion(new)
                logger.warning("this kernel cannot confine extensions fully; running them without: \(new.joined(separator: "; ")) (tether host --require-sandbox refuses instead)")
            }
        }
        return (confinement, temporary)
    }

    func removeTemporaryDirectory(_ path: String) {
        do {
            try PrivateTemporaryDirectory.remove(path)
        } catch {
            logger.warning("cannot remove the temporary directory \(path): \(error)")
        }
    }
}

enum SandboxRefusal: Error, CustomStringConvertible {
    case missing([String])
    case noTemporaryDirectory(Errno)

    var description: String {
        switch self {
        case .missing(let what):
            "--require-sandbox, and this kernel cannot confine it: missing \(what.joined(separator: "; "))"
        case .noTemporaryDirectory(let error):
            "cannot make its temporary directory: \(error)"
        }
    }
}

extension SandboxReport {
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "files": .string(files), "network": .string(networkDenied ? "denied" : "allowed"),
            "signals": .string(signalsScoped ? "scoped" : "none"),
            "memoryLimitMiB": memoryLimitMiB.map { .integer($0) } ?? .null,
        ]
        if let memoryBy { object["memoryBy"] = .string(memoryBy) }
        return .object(object)
    }
}
