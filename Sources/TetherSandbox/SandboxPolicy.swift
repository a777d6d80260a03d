import TetherManifest

/// What one extension may do, by its role, as iOS decides it for an
/// extension point: the table in the README's "Sandbox" section.
///
/// Every role reads the whole file system (as a user's program does) but
/// other extensions' temporary directories, and writes only its private temporary directory, plus the group directory
/// unless it is a keyboard without open access, which also gets no network.
/// No role may signal or trace a process outside its own sandbox.
package struct SandboxPolicy: Sendable, Hashable {
    /// The group directory.
    package var group: String
    package var groupWritable: Bool
    /// TCP, UDP and every other socket but Unix-domain ones.
    package var network: Bool
    /// Its private temporary directory (`TMPDIR`), writable.
    package var temporaryDirectory: String?
    /// Set for a process that removes its own temporary directory at exit
    /// (one started by hand): it may remove empty directories there.
    package var removesTemporaryDirectoryIn: String?
    /// `RLIMIT_DATA`, MiB; nil for none.
    package var memoryLimitMiB: Int?
    /// `RLIMIT_FSIZE`, MiB: no file it writes grows past it (SIGXFSZ,
    /// which ends it unless it handles the signal; then EFBIG). The
    /// manifest's `diskLimitMiB`.
    package var fileSizeLimitMiB: Int? = ExtensionManifest.defaultDiskLimitMiB
    /// The group's secrets directory (beside the group): writable with
    /// the group; where the group is read-only, not even readable (such a
    /// role gets tokens from the host's broker). It must exist by then.
    package var secrets: String?
    /// Other groups' secrets directories (`SecretsIndex`): where the group
    /// is read-only, not readable either.
    package var otherSecrets: [String] = []
    /// Where private temporary directories live (`BASE/tether-UID`, the
    /// host's BASE and /tmp): hidden from every role, even to read, but for
    /// its own `temporaryDirectory`. A neighbour's TMPDIR may hold what a
    /// keyboard was typed; a widget could send it away.
    package var hiddenTemporaryRoots: [String] = PrivateTemporaryDirectory.roots(base: nil)
    /// Unix sockets of its own: only for a process started by hand, which
    /// reaches hosts by the socket's path (a launch has its link instead).
    package var unixSockets = false

    /// The policy but its temporary directory's name: what rules built
    /// ahead of a launch (`LandlockRuleset`) are kept and checked by.
    package var kind: SandboxPolicy {
        var kind = self
        kind.temporaryDirectory = nil
        return kind
    }

    package init(group: String, groupWritable: Bool, network: Bool, temporaryDirectory: String?,
                 memoryLimitMiB: Int?) {
        self.group = group
        self.groupWritable = groupWritable
        self.network = network
        self.temporaryDirectory = temporaryDirectory
        self.memoryLimitMiB = memoryLimitMiB
    }

    /// The policy of `role`: a keyboard without open access is read-only
    /// and offline; every other extension may write the group and reach
    /// the network.
    package init(role: ExtensionRole, openAccess: Bool, group: String, temporaryDirectory: String?,
                 memoryLimitMiB: Int?) {
        let trusted = role != .keyboard || openAccess
        self.init(group: group, groupWritable: trusted, network: trusted, temporaryDirectory: temporaryDirectory,
                  memoryLimitMiB: memoryLimitMiB)
    }
}
