import FoundationEssentials
import TetherIPC
import TetherLog
import TetherLoop
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The shared `main` of every role: resolves the identity, runs the loop on
/// the main thread until the extension finishes, and exits with its code.
/// SIGINT and SIGTERM end it cleanly (exit 0).
enum ExtensionMain {
    static func run(role: ExtensionRole, manifest: EmbeddedManifest?, makeDriver: (ExtensionContext) -> RoleDriver) -> Never {
        let tool = CommandLine.arguments.first.flatMap { FilePath($0).lastComponent?.string } ?? role.rawValue
        // A host that went away must not kill us with SIGPIPE mid-write; the
        // write fails and the connection's end is handled on the loop.
        signal(SIGPIPE, SIG_IGN)
        func fail(_ message: String, code: Int32) -> Never {
            LogOutput.standardError.write("\(tool): \(message)")
            exit(code)
        }
        if let manifest, manifest.role != role.rawValue {
            fail("built with a manifest for role '\(manifest.role ?? "?")', but this executable is a \(role.rawValue)", code: 2)
        }
        if CommandLine.arguments.dropFirst().contains("--manifest") {
            guard let manifest else {
                fail("built without a manifest: add the TetherManifest plugin and a NAME.extension.json to its target", code: 2)
            }
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? (CommandLine.arguments.first ?? tool)
            LogOutput.standardOutput.write(manifest.installable(executable: executable))
            exit(0)
        }
        let identity: ExtensionIdentity
        do {
            identity = try ExtensionIdentity.resolve(role: role, arguments: CommandLine.arguments,
                                                     variable: ProcessEnvironment.value,
                                                     parentPID: getppid(), defaultName: manifest?.name)
        } catch {
            fail("\(error)", code: error.isBadInput ? 2 : 3)
        }
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            LogOutput.standardError.write("\(identity.name): cannot start the event loop: \(error)")
            exit(3)
        }
        let context = ExtensionContext(identity: identity, loop: loop)
        let driver = makeDriver(context)
        let start = Start(context: context, driver: driver)
        loop.execute { start.run() }
        loop.run()
        // What the loop had not written yet, boundedly.
        LogOutput.standardOutput.finish()
        LogOutput.standardError.finish()
        exit(context.exitCode)
    }

    /// Carries the non-Sendable start-up onto the loop thread, where it runs.
    private final class Start: @unchecked Sendable {
        let context: ExtensionContext
        let driver: RoleDriver
        init(context: ExtensionContext, driver: RoleDriver) {
            self.context = context
            self.driver = driver
        }

        func run() {
            // Output that neither traps nor blocks the loop (see ExtensionContext.log).
            LogOutput.standardOutput.attach(to: context.loop)
            LogOutput.standardError.attach(to: context.loop, sharing: .standardOutput)
            for signal in [SIGINT, SIGTERM] {
                _ = try? SignalWatcher(loop: context.loop, signal: signal) { [context] _ in context.finish() }
            }
            let identity = context.identity
            var hello: [String: JSONValue] = [
                "name": .string(identity.name), "role": .string(identity.role.rawValue),
                "pid": .integer(getpid()), "openAccess": .bool(identity.openAccess),
            ]
            hello.merge(driver.helloFields) { _, new in new }
            context.onHostEvent = { [driver] event in driver.hostEvent(event) }
            guard context.start(hello: .object(hello)) else { return }
            driver.begin()
        }
    }
}

extension ExtensionError {
    var isBadInput: Bool {
        switch self {
        case .invalidName, .refused: true
        default: false
        }
    }
}
