import Foundation
import Glibc
import TetherGroup
import TetherHost

/// `tether host` on the event loop.
final class HostSession: LoopSession, @unchecked Sendable {
    private let group: GroupDirectory
    private let manifests: [ExtensionManifest]
    private let grace: Seconds
    private var host: TetherHost.Host?

    init(group: GroupDirectory, manifests: [ExtensionManifest], grace: Seconds) throws {
        self.group = group
        self.manifests = manifests
        self.grace = grace
        try super.init()
    }

    override func start() {
        let log = HostLog(info: { output($0) }, error: { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        })
        let launcher = [ownExecutable(), "launch-extension", "--parent", String(getpid()), "--"]
        let host = TetherHost.Host(loop: loop, configuration: TetherHost.Host.Configuration(
            group: group, manifests: manifests, launcher: launcher, graceMilliseconds: grace.milliseconds, log: log))
        do {
            try host.start()
        } catch .alreadyRunning(let pid) {
            return finish(.failure(.refused(HostError.alreadyRunning(pid: pid).description)))
        } catch {
            return finish(.failure(.environment(error.description)))
        }
        self.host = host
        guard handleSignals([SIGINT, SIGTERM], { [unowned self] _ in
            self.host?.shutdown { self.finish(.success(0)) }
        }) else { return }
        output("tether host ready: pid \(host.pid), group \(group.path), \(manifests.count) extension(s)")
        SystemdNotifier.notify("READY=1\nMAINPID=\(host.pid)", environment: ProcessInfo.processInfo.environment)
    }
}
