import Logging
import TetherGroup
import TetherManifest
#if canImport(Glibc)
import Glibc
#endif

/// The group's shared parts (`shared/`, `stores/`, `tallies/`, and the
/// secrets beside it: what extensions may write) have a size, counted by
/// the host (invariant 27): past `groupLimitMiB` the group is marked full
/// (`GroupDirectory.fullMarkerPath`), and every writer that would add
/// refuses with a clear error (the SDK's, the CLI's); back under, the mark
/// goes. A writer that ignores it is stopped past twice the limit: every
/// running extension that may write the group (the host cannot tell which
/// one wrote), with exit reason `disk`.
extension Host {
    /// What extensions may write: each counted as a tree of its own.
    var groupParts: [String] {
        let group = configuration.group
        return ["shared", "stores", "tallies"].map { group.path + "/" + $0 } + [(try? group.preparedSecretsPath()) ?? group.secretsPath]
    }

    func watchGroupSize() {
        guard let sandbox else { return }
        let limitMiB = configuration.groupLimitMiB
        // What a dead host left is stale: counted afresh from here.
        endGroupSize()
        for part in groupParts {
            _ = sandbox.watchGroupPart(part, limitMiB: limitMiB) { [unowned self] bytes, crowded in
                groupCounted(part, bytes: bytes, crowded: crowded)
            }
        }
    }

    /// No host counts the group now: no mark of a count stays behind.
    func endGroupSize() {
        unlink(GroupDirectory.fullMarkerPath(of: configuration.group.path))
    }

    /// The parts' bytes, saturating (a sparse file may claim `Int64.max`).
    private var groupBytes: Int64 {
        groupSizes.values.reduce(Int64(0)) { total, part in
            let (sum, overflow) = total.addingReportingOverflow(part.bytes)
            return overflow ? .max : sum
        }
    }

    private func groupCounted(_ part: String, bytes: Int64, crowded: Bool) {
        let wasFull = isGroupFull
        groupSizes[part] = (bytes, crowded)
        let limit = Int64(configuration.groupLimitMiB) << 20
        let total = groupBytes
        let marker = GroupDirectory.fullMarkerPath(of: configuration.group.path)
        if isGroupFull != wasFull {
            GroupDirectory.setFullMark(isGroupFull, at: marker)
            if isGroupFull {
                logger.warning("""
                    the group's shared/, stores/, tallies/ and secrets hold \(total >> 20) MiB, more than its limit of \
                    \(configuration.groupLimitMiB) MiB (--group-limit): writes that add are refused until files are removed
                    """)
            } else {
                logger.info("the group's shared/, stores/, tallies/ and secrets are back under their limit of \(configuration.groupLimitMiB) MiB")
            }
        }
        // Past twice the limit, someone writes past the mark: every writer stops.
        guard total / 2 > limit || groupSizes.values.contains(where: \.crowded) else { return }
        for supervisor in supervisors.all where supervisor.hasProcess
            && (supervisor.manifest.role != .keyboard || supervisor.manifest.openAccess) {
            supervisor.killForDisk("may write the group, whose shared/, stores/, tallies/ and secrets hold \(total >> 20) MiB, past twice its limit")
        }
    }

    /// The group's shared parts hold more than it allows.
    var isGroupFull: Bool {
        groupBytes > Int64(configuration.groupLimitMiB) << 20 || groupSizes.values.contains(where: \.crowded)
    }
}
