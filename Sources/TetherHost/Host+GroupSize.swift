import Logging
import TetherGroup
import TetherManifest
#if canImport(Glibc)
import Glibc
#endif

/// The group's shared parts (`shared/`, `stores/`) have a size, counted by
/// the host (invariant 27): past `groupLimitMiB` the group is marked full
/// (`GroupDirectory.fullMarkerPath`), and every writer that would add
/// refuses with a clear error (the SDK's, the CLI's); back under, the mark
/// goes. A writer that ignores it is stopped past twice the limit: every
/// running extension that may write the group (the host cannot tell which
/// one wrote), with exit reason `disk`.
extension Host {
    static let groupParts = ["shared", "stores"]

    func watchGroupSize() {
        guard let sandbox else { return }
        let limitMiB = configuration.groupLimitMiB
        // What a dead host left is stale: counted afresh from here.
        unlink(GroupDirectory.fullMarkerPath(of: configuration.group.path))
        for part in Self.groupParts {
            _ = sandbox.watchGroupPart(configuration.group.path + "/" + part, limitMiB: limitMiB) { [unowned self] bytes, crowded in
                groupCounted(part, bytes: bytes, crowded: crowded)
            }
        }
    }

    private func groupCounted(_ part: String, bytes: Int64, crowded: Bool) {
        let wasFull = isGroupFull
        groupParts[part] = (bytes, crowded)
        let limit = Int64(configuration.groupLimitMiB) << 20
        let total = groupParts.values.reduce(Int64(0)) { $0 + $1.bytes }
        let marker = GroupDirectory.fullMarkerPath(of: configuration.group.path)
        if isGroupFull != wasFull {
            if isGroupFull {
                let fd = open(marker, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
                if fd >= 0 { close(fd) }
                logger.warning("""
                    the group's shared/ and stores/ hold \(total >> 20) MiB, more than its limit of \
                    \(configuration.groupLimitMiB) MiB (--group-limit): writes that add are refused until files are removed
                    """)
            } else {
                unlink(marker)
                logger.info("the group's shared/ and stores/ are back under their limit of \(configuration.groupLimitMiB) MiB")
            }
        }
        // Past twice the limit, someone writes past the mark: every writer stops.
        guard total > 2 * limit || groupParts.values.contains(where: \.crowded) else { return }
        for supervisor in supervisors where supervisor.hasProcess
            && (supervisor.manifest.role != .keyboard || supervisor.manifest.openAccess) {
            supervisor.killForDisk("may write the group, whose shared/ and stores/ hold \(total >> 20) MiB, past twice its limit")
        }
    }

    /// The group's shared parts hold more than it allows.
    var isGroupFull: Bool {
        let limit = Int64(configuration.groupLimitMiB) << 20
        return groupParts.values.reduce(Int64(0)) { $0 + $1.bytes } > limit || groupParts.values.contains(where: \.crowded)
    }
}
