import CTetherSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The namespaces and root a child runs in (TetherSandbox's
/// `ExtensionWorld` decides them; the spawn's child enters them, in C,
/// after its stdio and before its directory and confinement). Holds the C
/// form for as long as it lives; one spawn uses it at a time.
package final class SpawnWorld: @unchecked Sendable {
    /// One step of building its root, in order. Targets are absolute paths
    /// in the new root; sources, in the host's.
    package enum Step: Sendable, Equatable {
        /// `source` bound at `target`, read-only; skipped if `optional` and missing.
        case read(String, at: String, optional: Bool)
        /// `source` bound at `target`, writable.
        case write(String, at: String, optional: Bool)
        /// A tmpfs Landlock lets be written (a TMPDIR).
        case tmpfs(at: String, options: String)
        /// A symbolic link at `at` whose text is `text`.
        case symlink(at: String, text: String)
        /// The device file `path` bound at the same path.
        case device(String)
        /// The PID namespace's own /proc.
        case proc(at: String)
        /// An empty read-only directory over what is at `target` (if there).
        case mask(at: String)
    }

    package let steps: [Step]
    package let ownNetwork: Bool
    /// Where it starts, and its `TMPDIR`.
    package let temporaryDirectory: String
    private let world: UnsafeMutablePointer<tether_world>
    private let cSteps: UnsafeMutableBufferPointer<tether_world_step>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// `staging`: an existing directory the root is built on, which no
    /// source lies beneath (a tmpfs hides it in the child's namespace).
    package init(steps: [Step], ownNetwork: Bool, temporaryDirectory: String, staging: String,
                 landlockABI: Int?) throws(Errno) {
        self.steps = steps
        self.ownNetwork = ownNetwork
        self.temporaryDirectory = temporaryDirectory
        world = .allocate(capacity: 1)
        cSteps = .allocate(capacity: max(steps.count, 1))
        func copy(_ text: String?) throws(Errno) -> UnsafeMutablePointer<CChar>? {
            guard let text else { return nil }
            guard let copied = strdup(text) else { throw .noMemory }
            strings.append(copied)
            return copied
        }
        var staged: UnsafeMutablePointer<CChar>?
        do throws(Errno) {
            for (index, step) in steps.enumerated() {
                // Landlock: 0 read, 1 write (tether_landlock_allow's codes), -1 nothing.
                let (kind, source, target, data, optional, landlock):
                    (tether_world_step_kind, String?, String, String?, Bool, Int32) = switch step {
                    case .read(let source, let target, let optional): (TETHER_WORLD_READ, source, target, nil, optional, 0)
                    case .write(let source, let target, let optional): (TETHER_WORLD_WRITE, source, target, nil, optional, 0)
                    case .tmpfs(let target, let options): (TETHER_WORLD_TMPFS, nil, target, options, false, 1)
                    case .symlink(let target, let text): (TETHER_WORLD_SYMLINK, text, target, nil, false, -1)
                    case .device(let path): (TETHER_WORLD_DEVICE, path, path, nil, true, 0)
                    case .proc(let target): (TETHER_WORLD_PROC, nil, target, nil, false, 0)
                    case .mask(let target): (TETHER_WORLD_MASK, nil, target, nil, true, -1)
                    }
                cSteps[index] = tether_world_step(kind: Int32(kind.rawValue), source: try copy(source),
                                                  target: try copy(target), data: try copy(data),
                                                  optional: optional ? 1 : 0, landlock: landlock)
            }
            staged = try copy(staging)
        } catch {
            strings.forEach { free($0) }
            cSteps.deallocate()
            world.deallocate()
            throw error
        }
        world.initialize(to: tether_world(own_network: ownNetwork ? 1 : 0, uid: getuid(), gid: getgid(),
                                          staging: staged, steps: UnsafePointer(cSteps.baseAddress),
                                          step_count: Int32(steps.count), landlock_abi: Int32(landlockABI ?? 0),
                                          error: 0, failed_step: 0))
    }

    deinit {
        strings.forEach { free($0) }
        cSteps.deallocate()
        world.deallocate()
    }

    /// Why the last spawn (or probe) could not enter it: the step (an index
    /// into `steps`, or nil for the namespaces, ids, root or pivot) and the
    /// error. Nil if it did.
    package var failure: (step: String, error: Errno)? {
        guard world.pointee.error != 0 else { return nil }
        let step = Int(world.pointee.failed_step)
        let name = switch step {
        case Int(TETHER_WORLD_STEP_CLONE): "its namespaces"
        case Int(TETHER_WORLD_STEP_IDS): "its user and group ids"
        case Int(TETHER_WORLD_STEP_ROOT): "its root"
        case Int(TETHER_WORLD_STEP_PIVOT): "the switch to its root"
        default: steps.indices.contains(step) ? "\(steps[step])" : "step \(step)"
        }
        return (name, Errno(rawValue: world.pointee.error))
    }

    /// Enters it in a child that exits at once: nil if this machine lets
    /// it be made, else why not (`failure`).
    package func probe() -> (step: String, error: Errno)? {
        tether_world_probe(world) == 0 ? nil : failure
    }

    /// For the spawn request, with its failure cleared.
    func prepared() -> UnsafeMutablePointer<tether_world> {
        world.pointee.error = 0
        world.pointee.failed_step = 0
        return world
    }
}
