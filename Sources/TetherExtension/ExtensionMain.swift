import TetherJSON
import FoundationEssentials
import Synchronization
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest
import TetherSandbox
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The shared `main` of every role: runs the extension actor's loop on the
/// main thread, and on it resolves the identity, makes the context and the
/// role's driver, and runs until the extension finishes; then exits with
/// its code. SIGINT and SIGTERM end it cleanly (exit 0).
enum ExtensionMain {
    static func run(role: ExtensionRole, manifest: @escaping @Sendable @ExtensionActor () -> EmbeddedManifest?,
                    makeDriver: @escaping @Sendable @ExtensionActor (ExtensionContext) -> RoleDriver) -> Never {
        let tool = CommandLine.arguments.first.flatMap { FilePath($0).lastComponent?.string } ?? role.rawValue
        // A host that went away must not kill us with SIGPIPE mid-write; the
        // write fails and the connection's end is handled on the loop.
        signal(SIGPIPE, SIG_IGN)
        StandardDescriptors.ensureOpen()
        let loop: EventLoop
        switch ExtensionActor.made {
        case .success(let made): loop = made
        case .failure(let error): fail(tool, "cannot start the event loop: \(error)", code: 3)
        }
        let exitCode = Mutex<Int32>(0)
        ExtensionActor.task {
            start(role: role, tool: tool, manifest: manifest(), makeDriver: makeDriver) { code in
                exitCode.withLock { $0 = code }
            }
        }
        loop.run()
        if let temporary = temporaryDirectory.withLock({ $0 }) { try? PrivateTemporaryDirectory.remove(temporary) }
        // What the loop had not written yet, boundedly.
        LogOutput.standardOutput.finish()
        LogOutput.standardError.finish()
        exit(exitCode.withLock { $0 })
    }

    /// The private TMPDIR of an extension started by hand, removed at exit.
    private static let temporaryDirectory = Mutex<String?>(nil)

    /// Escaped: the message may quote a path or variable from outside.
    static func fail(_ tool: String, _ message: String, code: Int32) -> Never {
        LogOutput.standardError.write(PrintableText.escaped("\(tool): \(message)"))
        exit(code)
    }

    /// Everything before the role's own code: the manifest checks and
    /// `--manifest`, the identity, output, signals, the hello. `onFinish`
    /// gets the exit code when the extension finishes.
    @ExtensionActor
    private static func start(role: ExtensionRole, tool: String, manifest: EmbeddedManifest?,
                              makeDriver: @ExtensionActor (ExtensionContext) -> RoleDriver,
                              onFinish: @escaping @Sendable (Int32) -> Void) {
        if let manifest, manifest.role != role.rawValue {
            fail(tool, "built with a manifest for role '\(manifest.role ?? "?")', but this executable is a \(role.rawValue)", code: 2)
        }
        if CommandLine.arguments.dropFirst().contains("--manifest") {
            guard let manifest else {
                fail(tool, "built without a manifest: add the TetherManifest plugin and a NAME.extension.json to its target", code: 2)
            }
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? (CommandLine.arguments.first ?? tool)
            LogOutput.standardOutput.write(manifest.installable(executable: executable))
            // A manifest written to a full disk is not installed.
            if let failure = LogOutput.standardOutput.writeFailure {
                fail(tool, "cannot write the manifest to standard output: \(failure)", code: 3)
            }
            exit(0)
        }
        let identity: ExtensionIdentity
        do {
            identity = try ExtensionIdentity.resolve(role: role, arguments: CommandLine.arguments,
                                                     variable: ProcessEnvironment.value,
                                                     defaultName: manifest?.name)
        } catch {
            fail(tool, "\(error)", code: error.isBadInput ? 2 : 3)
        }
        guard let loop = ExtensionActor.loop else { fail(tool, "the event loop is gone", code: 3) }
        let context = ExtensionContext(identity: identity, loop: loop)
        context.onFinish = onFinish
        guard context.claimInstance() else { return }
        var hello = ExtensionHello(name: identity.name, role: identity.role.rawValue, pid: getpid(),
                                   openAccess: identity.openAccess)
        var early: EarlyAttachment.Outcome?
        // Started by hand: confined by the same rules a host would apply,
        // before any of the author's code (the driver makes their type). A
        // keyboard without open access says hello first (a keyboard adds no
        // fields to it): confined, it may make no socket.
        if !identity.isManaged {
            if SelfConfinement.isReadOnlyKeyboard(identity, manifest: manifest) {
                early = EarlyAttachment.attach(socketPath: identity.socketPath,
                                               hostLockPath: identity.group.lockPath(for: .host), hello: hello.json)
            }
            let temporary = SelfConfinement.apply(identity: identity, manifest: manifest, tool: tool)
            temporaryDirectory.withLock { $0 = temporary }
        }
        let driver = makeDriver(context)
        // Output that neither traps nor blocks the loop (see ExtensionContext.log).
        LogOutput.standardOutput.attach(to: loop)
        LogOutput.standardError.attach(to: loop, sharing: .standardOutput)
        for signal in [SIGINT, SIGTERM] {
            let watcher = try? SignalWatcher(loop: loop, signal: signal) { [context] _ in
                ExtensionActor.assumeIsolated { context.finish() }
            }
            // A host stopping thousands need not read each one's signal mask.
            if signal == SIGTERM, watcher != nil { hello.endsOnSigterm = true }
        }
        driver.describe(&hello)
        context.onHostEvent = { [driver] event in driver.hostEvent(event) }
        guard context.start(hello: hello.json, early: early) else { return }
        driver.begin()
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
