import CTetherSystem

/// Kernel confinement the child takes on before exec (built by
/// TetherSandbox; the spawn only applies it): it joins its cgroup first of
/// all, then, last before exec, `RLIMIT_DATA` and `RLIMIT_FSIZE`, no
/// capabilities, `PR_SET_NO_NEW_PRIVS`, the Landlock ruleset and the
/// seccomp filter.
package struct SpawnConfinement: Sendable {
    /// `RLIMIT_DATA`, soft and hard.
    package var dataLimitBytes: Int?
    /// `RLIMIT_FSIZE`, soft and hard: a write past it raises SIGXFSZ.
    package var fileSizeLimitBytes: Int?
    /// A Landlock ruleset to enforce (the caller keeps and closes it), or -1.
    package var landlockRuleset: Int32
    /// Classic BPF instructions for a seccomp filter.
    package var seccompFilter: [UInt8]?
    /// A cgroup's `cgroup.procs`, open for writing (the caller keeps and
    /// closes it), or -1.
    package var cgroupProcs: Int32
    /// Namespaces and a root of its own, or nil: the host's.
    package var world: SpawnWorld?

    package init(dataLimitBytes: Int? = nil, fileSizeLimitBytes: Int? = nil, landlockRuleset: Int32 = -1,
                 seccompFilter: [UInt8]? = nil, cgroupProcs: Int32 = -1, world: SpawnWorld? = nil) {
        self.world = world
        self.dataLimitBytes = dataLimitBytes
        self.fileSizeLimitBytes = fileSizeLimitBytes
        self.landlockRuleset = landlockRuleset
        self.seccompFilter = seccompFilter
        self.cgroupProcs = cgroupProcs
    }

    /// `tether_spawn` with `request`'s confinement fields filled from
    /// `confinement` (none: every field off).
    package static func spawn(_ request: inout tether_spawn_request, confinement: SpawnConfinement?,
                              pid: inout Int32, pidfd: inout Int32) -> Int32 {
        request.cgroup_procs = confinement?.cgroupProcs ?? -1
        request.world = confinement?.world?.prepared()
        guard let confinement else {
            request.confinement = tether_confinement(data_limit: 0, file_size_limit: 0, no_new_privileges: 0,
                                                     landlock_ruleset: -1, seccomp_filter: nil,
                                                     seccomp_filter_length: 0)
            return tether_spawn(&request, &pid, &pidfd)
        }
        return confinement.withConfinement { applied in
            request.confinement = applied
            return tether_spawn(&request, &pid, &pidfd)
        }
    }

    /// The C form, valid inside `body` (it points into the filter).
    package func withConfinement<Result>(_ body: (tether_confinement) -> Result) -> Result {
        var applied = tether_confinement(data_limit: Int64(dataLimitBytes ?? 0),
                                         file_size_limit: Int64(fileSizeLimitBytes ?? 0), no_new_privileges: 1,
                                         landlock_ruleset: landlockRuleset, seccomp_filter: nil,
                                         seccomp_filter_length: 0)
        guard let seccompFilter else { return body(applied) }
        return seccompFilter.withUnsafeBytes { bytes in
            applied.seccomp_filter = bytes.baseAddress
            applied.seccomp_filter_length = UInt16(truncatingIfNeeded: bytes.count / 8)
            return body(applied)
        }
    }
}
