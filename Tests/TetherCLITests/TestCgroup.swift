import CTetherSystem
import Foundation
import TetherTestSupport

/// A cgroup of its own for one test, made where systemd would make a unit's
/// (beside this process's), optionally marked delegated as systemd marks
/// `Delegate=yes` units. Its whole tree is killed and removed at the end.
final class TestCgroup {
    let mount: String
    /// Its path in the hierarchy.
    let path: String
    var directory: String { mount + path }
    /// Whether the test made it (and removes it at the end).
    private let made: Bool

    /// The cgroup v2 mount point and this process's cgroup there.
    static let hierarchy: (mount: String, own: String)? = {
        guard let own = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8))?
            .split(separator: "\n").first(where: { $0.hasPrefix("0::") }).map({ String($0.dropFirst(3)) }),
            let mounts = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields[dash + 1] == "cgroup2",
               fields[3] == "/" {
                return (String(fields[4]), own)
            }
        }
        return nil
    }()

    /// Whether a test cgroup can be made and marked here (root, or a user
    /// in a delegated session).
    static let available: Bool = (try? TestCgroup(delegated: true)) != nil

    /// Marked with both of systemd's attributes (`delegated`), or none.
    convenience init(delegated: Bool) throws {
        try self.init(marks: delegated ? ["trusted.delegate", "user.delegate"] : [])
    }

    /// Marked with those of `marks` this user may set (at least one).
    init(marks: [String]) throws {
        guard let (mount, own) = Self.hierarchy else { throw POSIXError(.ENOENT) }
        self.mount = mount
        // The VM tier runs the tests in a leaf beside the cgroups they make
        // (one with processes cannot hand controllers to its children).
        let base = ProcessInfo.processInfo.environment["TETHER_TEST_CGROUP_PARENT"] ?? own
        path = (base == "/" ? "" : base) + "/tether-test-\(UUID().uuidString.prefix(8))"
        guard mkdir(mount + path, 0o755) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        made = true
        if !marks.isEmpty {
            let marked = marks.filter { name in
                "1".withCString { setxattr(mount + path, name, $0, 1, 0) == 0 }
            }
            guard !marked.isEmpty else {
                rmdir(mount + path)
                throw POSIXError(.EPERM)
            }
        }
    }

    /// One made for the tests by someone else (the VM tier's root), at
    /// `path` in the hierarchy. Its children are removed at the end.
    init(existing path: String) throws {
        guard let (mount, _) = Self.hierarchy else { throw POSIXError(.ENOENT) }
        self.mount = mount
        self.path = path
        made = false
    }

    deinit {
        // Everything in it, then the tree bottom-up once the kernel has emptied it.
        let pids = Self.processes(under: directory)
        _ = try? "1".write(toFile: directory + "/cgroup.kill", atomically: false, encoding: .utf8)
        for pid in pids { _ = processEnded(pid, within: 10) }
        if made {
            Self.removeTree(directory, depth: 8)
        } else {
            for child in children() { Self.removeTree(directory + "/" + child, depth: 7) }
        }
    }

    func children() -> [String] { Self.children(of: directory) }

    static func children(of directory: String) -> [String] {
        var isDirectory: ObjCBool = false
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            FileManager.default.fileExists(atPath: directory + "/" + $0, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }

    static func removeTree(_ directory: String, depth: Int) {
        if depth > 0 { for child in children(of: directory) { removeTree(directory + "/" + child, depth: depth - 1) } }
        rmdir(directory)
    }

    func offers(_ controller: String) -> Bool {
        ((try? String(contentsOfFile: directory + "/cgroup.controllers", encoding: .utf8)) ?? "")
            .split(whereSeparator: { $0 == " " || $0 == "\n" }).contains { $0 == controller }
    }

    static func processes(under directory: String) -> [Int32] {
        var pids = ((try? String(contentsOfFile: directory + "/cgroup.procs", encoding: .utf8)) ?? "")
            .split(separator: "\n").compactMap { Int32($0) }
        for child in children(of: directory) { pids += processes(under: directory + "/" + child) }
        return pids
    }

    /// Its cgroup v2 path, from /proc.
    static func cgroup(of pid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }
}
