import FoundationEssentials
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest
import TetherGroup
import TetherSandbox
#if canImport(Glibc)
import Glibc
#endif

/// An extension started by hand confines itself as a host would confine it
/// (TetherSandbox, by its role and open access), with a private TMPDIR of
/// its own under the one it was given. Runs before the loop has made any
/// thread, so Landlock binds the whole process.
enum SelfConfinement {
    /// A keyboard without open access passes nothing on (invariant 25): it
    /// attaches before confining itself and keeps no `socket(AF_UNIX)`
    /// (see `EarlyAttachment`), and it never runs unconfined.
    static func isReadOnlyKeyboard(_ identity: ExtensionIdentity, manifest: EmbeddedManifest?) -> Bool {
        identity.role == .keyboard && !(identity.openAccess || (manifest?.openAccess ?? false))
    }

    /// Returns the temporary directory to remove at exit, if one was made.
    /// A keyboard without open access that cannot confine itself exits (3).
    static func apply(identity: ExtensionIdentity, manifest: EmbeddedManifest?, tool: String) -> String? {
        // BASE/tether-UID/by-hand: ours alone, and the only place it may remove (its own) directory.
        // Held while it lives; those of killed ones are removed first.
        let base = ProcessEnvironment.value("TMPDIR")
        let made = try? ByHandTemporaryDirectory.make(base: base, prefix: identity.name)
        let (parent, temporary) = (made?.parent, made?.path)
        let openAccess = identity.openAccess || (manifest?.openAccess ?? false)
        let memory = manifest?.memoryLimitMiB ?? identity.role.defaultMemoryLimitMiB
        var policy = SandboxPolicy(role: identity.role, openAccess: openAccess, group: identity.group.path,
                                   temporaryDirectory: temporary, memoryLimitMiB: memory)
        if let disk = manifest?.diskLimitMiB { policy.fileSizeLimitMiB = disk }
        // Its siblings' TMPDIRs and launched extensions' are out of its reach.
        policy.hiddenTemporaryRoots = PrivateTemporaryDirectory.roots(base: base)
        // Made now, while it may: confined, a writable role writes there
        // and a read-only one cannot even read it.
        if let secrets = try? identity.group.preparedSecretsPath(), secrets != identity.group.path { policy.secrets = secrets }
        if !policy.groupWritable { policy.otherSecrets = SecretsIndex.known().filter { $0 != policy.secrets } }
        // No link: a writable role reaches hosts by the socket's path (and
        // re-attaches); a read-only keyboard attached already, if it could.
        let readOnlyKeyboard = isReadOnlyKeyboard(identity, manifest: manifest)
        policy.unixSockets = !readOnlyKeyboard
        // It removes its own TMPDIR at exit, from inside the sandbox: it
        // may remove empty directories in the parent, never read it.
        if temporary != nil { policy.removesTemporaryDirectoryIn = parent }
        // Landlock binds this thread and what it starts: any thread already
        // running would stay free (none should: the loop has made none yet).
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 1
        if threads > 1 {
            LogOutput.standardError.write("\(tool): \(threads - 1) thread(s) started before confinement stay unconfined by Landlock")
        }
        // Read-only, it could not create the host's lock file to watch it
        // later; writable, it makes nothing at the group's top level.
        _ = try? identity.group.createdLockPath(for: .host)
        if policy.groupWritable { try? identity.group.prepareForExtensions() }
        let confinement = Confinement(policy: policy)
        if let shortage = confinement.shortage {
            // Short for a moment: no role runs with less than its rules.
            if let temporary { try? PrivateTemporaryDirectory.remove(temporary) }
            ExtensionMain.fail(tool, "cannot make its confinement's rules (\(shortage)); start it again when fewer files are open", code: 1)
        }
        if !confinement.missing.isEmpty {
            LogOutput.standardError.write("\(tool): this kernel cannot confine it fully; running without: \(confinement.missing.joined(separator: "; "))")
        }
        do {
            try confinement.applyToSelf()
        } catch {
            guard !readOnlyKeyboard else {
                if let temporary { try? PrivateTemporaryDirectory.remove(temporary) }
                ExtensionMain.fail(tool, "cannot confine itself (\(error)); a keyboard without open access does not run unconfined",
                                   code: 3)
            }
            LogOutput.standardError.write("\(tool): cannot confine itself (\(error)); running unconfined")
        }
        Confinement.releaseCaches()
        if let temporary { setenv("TMPDIR", temporary, 1) }
        return temporary
    }
}
