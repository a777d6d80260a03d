import TetherGroup
import CTetherSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The cgroup v2 subtree a host was given to manage: a systemd service or
/// scope with `Delegate=yes`, which systemd marks with the `trusted.delegate`
/// (or `user.delegate`) attribute and chowns to the unit's user. The host moves itself into `host/` (a
/// cgroup with children may hold no processes once controllers are on),
/// enables the memory and pids controllers for the children, and runs each
/// extension launch in a child of its own, `ext-G-NAME.N` (G a hash of the
/// group's path: hosts of two groups can share one delegated cgroup).
///
/// Never anywhere else: a cgroup systemd did not delegate is systemd's
/// (its CGROUP_DELEGATION.md), whoever may write it.
package final class DelegatedCgroup {
    /// The delegated cgroup's directory, e.g.
    /// `/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/tether@home-me-.local-state-tether-default.service`.
    package let directory: String
    /// Its path in the hierarchy (as /proc/PID/cgroup names it).
    package let path: String
    /// Controllers enabled for the extensions' cgroups: "memory", "pids".
    package let controllers: Set<String>
    /// `ext-G-`: this host's extensions' cgroups (never a kernel file's name).
    private let childPrefix: String
    private var sequence = 0

    static let hostLeaf = "host"

    /// Why the host runs its extensions without a cgroup each.
    package enum Unavailable: Error, CustomStringConvertible {
        /// No cgroup v2 hierarchy mounted (cgroup v1 only).
        case noHierarchy
        /// Its cgroup is neither marked delegated nor chowned to it (the
        /// usual case outside a `Delegate=yes` unit).
        case notDelegated(String)
        case failed(String, Errno)

        package var description: String {
            switch self {
            case .noHierarchy: "no cgroup v2 hierarchy is mounted"
            case .notDelegated(let path): "its cgroup \(path) is not delegated to it (systemd's Delegate=yes)"
            case .failed(let path, let error): "\(path): \(error)"
            }
        }
    }

    private init(directory: String, path: String, controllers: Set<String>, group: String) {
        self.directory = directory
        self.path = path
        self.controllers = controllers
        childPrefix = "ext-\(PathHash.hex(group))-"
    }

    /// Takes over the calling process's cgroup if it was delegated: moves
    /// the process into `host/` and enables the memory and pids
    /// controllers for extensions' cgroups (each only if the kernel and the
    /// delegation offer it). What a killed host left: `killLeftovers()`.
    /// Call it before starting any other process, which would stay behind
    /// in the delegated cgroup and keep controllers off. `group`: the
    /// group directory whose host lock the caller holds.
    /// `authority`: asked, for a cgroup no mark or owner says is delegated,
    /// whether the manager that runs this process delegates it (the user's
    /// systemd, which marks nothing: `ServiceManagerDelegation`).
    package static func claim(group: String, authority: (String) -> Bool = { _ in false }) -> Result<DelegatedCgroup, Unavailable> {
        let (mount, delegatedPath): (String, String)
        switch candidate(authority: authority) {
        case .success(let found): (mount, delegatedPath) = found
        case .failure(let unavailable): return .failure(unavailable)
        }
        let directory = mount + delegatedPath
        let leaf = directory + "/" + hostLeaf
        if mkdir(leaf, 0o755) != 0, errno != EEXIST { return .failure(.failed(leaf, Errno(rawValue: errno))) }
        do {
            try CgroupFile.write(leaf + "/cgroup.procs", "\(getpid())")
        } catch {
            return .failure(.failed(leaf + "/cgroup.procs", error))
        }
        return .success(DelegatedCgroup(directory: directory, path: delegatedPath,
                                        controllers: enableControllers(in: directory), group: group))
    }

    /// A new cgroup for one launch, with the limits set. Throws if it
    /// cannot be made (the launch then goes without one).
    package func makeChild(name: String, memoryLimitBytes: Int?, tasksLimit: Int) throws(Errno) -> ExtensionCgroup {
        var made: String?
        for _ in 0..<1_000 where made == nil {
            sequence += 1
            let candidate = "\(directory)/\(childPrefix)\(name).\(sequence)"
            if mkdir(candidate, 0o755) == 0 {
                made = candidate
            } else if errno != EEXIST {
                throw Errno(rawValue: errno)
            }
        }
        // Never one it did not make: another's may be in use.
        guard let childDirectory = made else { throw .fileExists }
        let child = ExtensionCgroup(directory: childDirectory,
                                    path: path + String(childDirectory.dropFirst(directory.count)))
        do {
            var memoryEnforced = false
            if controllers.contains("memory"), let memoryLimitBytes {
                try CgroupFile.write(childDirectory + "/memory.max", "\(memoryLimitBytes)")
                // The limit is the footprint: no swapping past it. And a
                // kill takes the whole extension, as jetsam does.
                try? CgroupFile.write(childDirectory + "/memory.swap.max", "0")
                try? CgroupFile.write(childDirectory + "/memory.oom.group", "1")
                memoryEnforced = true
            }
            if controllers.contains("pids") {
                try CgroupFile.write(childDirectory + "/pids.max", "\(tasksLimit)")
            }
            // Cgroups made inside it (where no Landlock keeps the extension
            // out of /sys) stay few and shallow, so its removal always
            // reaches the bottom.
            try CgroupFile.write(childDirectory + "/cgroup.max.depth", "\(ExtensionCgroup.maxDepth)")
            try CgroupFile.write(childDirectory + "/cgroup.max.descendants", "\(ExtensionCgroup.maxDescendants)")
            try child.openForJoining(memoryEnforced: memoryEnforced)
        } catch {
            _ = child.remove()
            throw error
        }
        return child
    }

    /// Every extension cgroup of this group here (a killed host's at start,
    /// those still in their grace at shutdown): their processes are killed and empty
    /// ones removed. Returns the others, to remove once the kernel has
    /// emptied them (a moment after the kill).
    package func killLeftovers() -> [ExtensionCgroup] {
        let root = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return [] }
        defer { close(root) }
        var remaining: [ExtensionCgroup] = []
        // Tether's names are ASCII: one that is not UTF-8 is none of its
        // launches (its decoded text would name nothing).
        for entry in DirectoryEntries.read(root) ?? [] where entry.isDirectory {
            guard let name = entry.name.exactText, name.hasPrefix(childPrefix) else { continue }
            // Numbered on past them: a new launch never takes a killed
            // host's name, whether or not it is gone yet.
            if let number = name.split(separator: ".").last.flatMap({ Int($0) }) { sequence = max(sequence, number) }
            let child = ExtensionCgroup(directory: directory + "/" + name, path: path + "/" + name)
            child.kill()
            if !child.remove() { remaining.append(child) }
        }
        return remaining
    }

    /// The delegated cgroup this process is in (its own, or the one above
    /// where it already moved into `host/`): the hierarchy's mount point and
    /// the path there. `claim` takes it; `tether doctor` only looks.
    static func candidate(in found: (mount: String, path: String)? = ownCgroup(),
                          authority: (String) -> Bool = { _ in false }) -> Result<(mount: String, path: String), Unavailable> {
        guard let (mount, own) = found else { return .failure(.noHierarchy) }
        let path = own.hasSuffix("/" + hostLeaf) ? String(own.dropLast(hostLeaf.count + 1)) : own
        // Outside its cgroup namespace's root a process sees "/../x": never
        // a path that leads out of the mount.
        guard path != "/", !path.isEmpty, !path.split(separator: "/").contains(".."), isCgroup2(mount + path),
              isDelegated(mount + path) || (isUnit(path) && authority(path)) else { return .failure(.notDelegated(path)) }
        return .success((mount, path))
    }

    /// The controllers the cgroup at `path` in this process's hierarchy
    /// offers (a service manager's, for what a scope of it would get).
    package static func controllers(at path: String) -> Set<String>? {
        guard let (mount, _) = ownCgroup(), !path.split(separator: "/").contains("..") else { return nil }
        return CgroupFile.controllers(mount + path)
    }

    /// A unit's own cgroup (a service's or a scope's): only a unit is ever
    /// delegated, so only then is its manager asked.
    static func isUnit(_ path: String) -> Bool {
        guard let last = path.split(separator: "/").last else { return false }
        return last.hasSuffix(".service") || last.hasSuffix(".scope")
    }

    /// The calling process's cgroup v2: the hierarchy's mount point and
    /// its path there.
    static func ownCgroup() -> (mount: String, path: String)? {
        guard let own = CgroupFile.read("/proc/self/cgroup")?.split(separator: "\n")
            .first(where: { $0.hasPrefix("0::") }).map({ String($0.dropFirst(3)) }) else { return nil }
        // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
        for line in (CgroupFile.read("/proc/self/mountinfo", limit: 1 << 20) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields[dash + 1] == "cgroup2",
                  fields.count > 4 else { continue }
            let root = String(fields[3])
            let mountPoint = unescapeOctal(String(fields[4]))
            // A mount of part of the hierarchy (a container's) shows its root.
            if root == "/" { return (mountPoint, own) }
            if own == root { return (mountPoint, "/") }
            if own.hasPrefix(root + "/") { return (mountPoint, String(own.dropFirst(root.count))) }
        }
        return nil
    }

    /// Delegated to this process's user, the ways systemd does it: marked
    /// with `trusted.delegate` (readable by root only) or `user.delegate`
    /// (systemd 251+) reading "1", or, where neither can be read, chowned:
    /// the directory, `cgroup.procs` and `cgroup.subtree_control` this
    /// user's while the parent is not (what `Delegate=yes` with `User=`
    /// does; the boundary of a subtree a user made inside its own is not a
    /// delegation). Never by ownership for root, which owns every cgroup.
    static func isDelegated(_ directory: String) -> Bool {
        isCgroup2(directory) && (isMarked(directory) || isChowned(directory))
    }

    /// On the cgroup v2 file system, not a directory elsewhere with files
    /// of the same names.
    static func isCgroup2(_ directory: String) -> Bool {
        var info = statfs()
        return statfs(directory, &info) == 0 && Int(info.f_type) == 0x6367_7270  // CGROUP2_SUPER_MAGIC
    }

    static func isMarked(_ directory: String) -> Bool {
        ["trusted.delegate", "user.delegate"].contains { name in
            var value = [UInt8](repeating: 0, count: 8)
            let length = value.withUnsafeMutableBytes { getxattr(directory, name, $0.baseAddress, $0.count) }
            return length == 1 && value[0] == UInt8(ascii: "1")
        }
    }

    static func isChowned(_ directory: String) -> Bool {
        let user = geteuid()
        guard user != 0, let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { return false }
        func owner(_ path: String) -> uid_t? {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_uid : nil
        }
        let ours = [directory, directory + "/cgroup.procs", directory + "/cgroup.subtree_control"].allSatisfy { owner($0) == user }
        return ours && owner(String(directory[..<slash])).map({ $0 != user }) ?? false
    }

    /// "+memory +pids" for the children, each on its own: one refused
    /// (not delegated, or processes still in the parent: EBUSY) leaves the other.
    private static func enableControllers(in directory: String) -> Set<String> {
        let offered = CgroupFile.controllers(directory)
        var enabled: Set<String> = []
        for controller in ["memory", "pids"] where offered.contains(controller) {
            if (try? CgroupFile.write(directory + "/cgroup.subtree_control", "+\(controller)")) != nil {
                enabled.insert(controller)
            }
        }
        return enabled
    }

    /// mountinfo escapes space, tab, newline and backslash as \ooo.
    private static func unescapeOctal(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
               let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
