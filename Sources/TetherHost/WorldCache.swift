import SystemPackage
import TetherLoop
import TetherManifest
import TetherSandbox

/// The worlds the host has made, kept for launches to come: by extension,
/// and by what makes one, so extensions alike (a thousand widgets of one
/// program) share one (a world is some 45 steps; a spawn uses it at a time,
/// on the loop). With the copies every world shows at /etc. Lives on the
/// host's loop.
final class WorldCache {
    private let loop: EventLoop
    private var byName: [String: (kind: Kind, world: SpawnWorld)] = [:]
    private var byKind: [Kind: SpawnWorld] = [:]
    /// What worlds show at /etc (made with the first world), and when (the
    /// loop's milliseconds) its copies were last brought up to date.
    private var configuration: WorldConfiguration?
    private var configurationRefreshed: UInt64?
    /// Why the copies could not be made, once (then worlds bind each file).
    private(set) var configurationError: Errno?

    struct Kind: Hashable {
        let policy: SandboxPolicy, executable: String, arguments: [String], bundle: String?, diskLimitMiB: Int
    }

    init(loop: EventLoop) { self.loop = loop }

    /// `manifest`'s world, made if its name has none for what it is now;
    /// `policy` is asked (it reads the secrets' index) only then. Nil where
    /// no world can show its program without what it must not see.
    func world(for manifest: ExtensionManifest, parent: @autoclosure () throws(Errno) -> String, support: KernelSupport,
               policy: () -> SandboxPolicy) throws(Errno) -> SpawnWorld? {
        refreshConfiguration(parent)
        if let made = byName[manifest.name], made.kind.executable == manifest.executable,
           made.kind.arguments == manifest.arguments, made.kind.diskLimitMiB == manifest.diskLimitMiB {
            return made.world
        }
        let bundle = manifest.source.isEmpty ? nil : ExecutableDependencies.directory(of: manifest.source)
        let kind = Kind(policy: policy(), executable: manifest.executable, arguments: manifest.arguments, bundle: bundle,
                        diskLimitMiB: manifest.diskLimitMiB)
        var made = byKind[kind]
        if made == nil {
            made = try ExtensionWorld.make(policy: kind.policy, executable: kind.executable, arguments: kind.arguments,
                                           bundle: bundle, diskLimitMiB: kind.diskLimitMiB,
                                           configuration: configuration, support: support)
        }
        guard let world = made else { return nil }
        byName[manifest.name] = (kind, world)
        byKind[kind] = world
        return world
    }

    /// Its world failed: made again at the next launch of each extension
    /// that shares it.
    func forget(_ name: String) {
        guard let failed = byName[name]?.world else { return }
        byName = byName.filter { $0.value.world !== failed }
        byKind = byKind.filter { $0.value !== failed }
    }

    /// At the host's clean stop.
    func removeConfiguration() { configuration?.remove() }

    /// The copies worlds show at /etc, brought up to date at most four
    /// times a second (a stat of each source). Where they cannot be made,
    /// worlds bind each file as it is.
    private func refreshConfiguration(_ parent: () throws(Errno) -> String) {
        if let refreshed = configurationRefreshed, loop.now &- refreshed < 250 { return }
        configurationRefreshed = loop.now
        do throws(Errno) {
            if configuration == nil { configuration = try WorldConfiguration(parent: parent()) }
            // A configuration directory came or went: worlds made before would bind what is not there.
            if try configuration?.refresh() == true {
                byName.removeAll()
                byKind.removeAll()
            }
        } catch {
            configurationError = configurationError ?? error
        }
    }
}
