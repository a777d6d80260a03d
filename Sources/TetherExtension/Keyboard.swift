/// A keyboard extension: interactive. Each line on standard input stands in
/// for a key press (or a typed phrase) and goes to `keyPressed`, one at a
/// time: the next key waits until the previous one's `keyPressed` returns,
/// so "start X" then "is X running?" reads as typed. One that throws has
/// its error printed, and the keyboard goes on.
///
/// A keyboard can ask whether a feature is running (`context.isFeatureRunning`)
/// and ask the host to start one (`context.startFeature`, the openURL hop).
/// Without `"openAccess": true` in its manifest its group access is
/// read-only. Started by hand, it ends when its input ends; started by a
/// host, it has no input and runs until the host stops it.
@ExtensionActor
public protocol Keyboard {
    /// Made once, before the first key.
    init()
    /// The manifest this executable was built with: by default the one the
    /// TetherManifest plugin embedded (`EmbeddedManifest.embedded`), or nil
    /// without the plugin.
    static var manifest: EmbeddedManifest? { get }
    /// One line of input; a thrown error is logged, and the next line still comes.
    func keyPressed(_ text: String, in context: ExtensionContext) async throws
}

extension Keyboard {
    public static var manifest: EmbeddedManifest? { .embedded }

    /// Runs the keyboard: attaches to a host, confines itself when started
    /// by hand, and reads input until it ends. `@main` calls it.
    public nonisolated static func main() {
        ExtensionMain.run(role: .keyboard, manifest: { Self.manifest }) { context in
            KeyboardDriver(keyboard: Self(), context: context)
        }
    }
}
