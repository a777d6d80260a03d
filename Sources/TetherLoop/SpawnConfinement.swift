import CTetherSystem

/// Kernel confinement the child takes on before exec (built by
/// TetherSandbox; the spawn only applies it): it joins its cgroup first of
/// all, then, last before exec, `RLIMIT_DATA`, `PR_SET_NO_NEW_PRIVS`, the
/// Landlock ruleset and the seccomp filter.
public struct SpawnConfinement: Sendable {
    /// `RLIMIT_DATA`, soft and hard.
    public var dataLimitBytes: Int?
    /// A Landlock ruleset to enforce (the caller keeps and closes it), or -1.
    public var landlockRuleset: Int32
    /// Classic BPF instructions for a seccomp filter.
    public var seccompFilter: [UInt8]?
    /// A cgroup's `cgroup.procs`, open for writing (the caller keeps and
    /// closes it), or -1.
    public var cgroupProcs: Int32

    public init(dataLimitBytes: Int? = nil, landlockRuleset: Int32 = -1, seccompFilter: [UInt8]? = nil,
                cgroupProcs: Int32 = -1) {
        self.dataLimitBytes = dataLimitBytes
        self.landlockRuleset = landlockRuleset
        self.seccompFilter = seccompFilter
        self.cgroupProcs = cgroupProcs
    }

    /// `tether_spawn` with `request`'s confinement fields filled from
    /// `confinement` (none: every field off).
    public static func spawn(_ request: inout tether_spawn_request, confinement: SpawnConfinement?,
                             pid: inout Int32, pidfd: inout Int32) -> Int32 {
        request.landlock_ruleset = -1
        request.cgroup_procs = -1
        guard let confinement else { return tether_spawn(&request, &pid, &pidfd) }
        request.no_new_privileges = 1
        request.data_limit = Int64(confinement.dataLimitBytes ?? 0)
        request.landlock_ruleset = confinement.landlockRuleset
        request.cgroup_procs = confinement.cgroupProcs
        guard let filter = confinement.seccompFilter else { return tether_spawn(&request, &pid, &pidfd) }
        return filter.withUnsafeBytes { bytes in
            request.seccomp_filter = bytes.baseAddress
            request.seccomp_filter_length = UInt16(truncatingIfNeeded: bytes.count / 8)
            return tether_spawn(&request, &pid, &pidfd)
        }
    }
}
