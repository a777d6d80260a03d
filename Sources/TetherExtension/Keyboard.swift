/// A keyboard extension: interactive. Each line on standard input stands in
/// for a key press (or a typed phrase) and goes to `keyPressed`. A keyboard
/// can ask whether a feature is running (`context.isFeatureRunning`) and ask
/// the host to start one (`context.startFeature`, the openURL hop). Without
/// `"openAccess": true` in its manifest its group access is read-only.
///
/// Started by hand, it ends when its input ends (once pending requests are
/// answered); started by a host, it has no input and runs until the host
/// stops it.
public protocol Keyboard {
    init()
    /// The manifest embedded at build time by the TetherManifest plugin
    /// (`.built`), or nil (the default).
    static var manifest: EmbeddedManifest? { get }
    func keyPressed(_ text: String, in context: ExtensionContext)
}

extension Keyboard {
    public static var manifest: EmbeddedManifest? { nil }

    public static func main() {
        let keyboard = Self()
        ExtensionMain.run(role: .keyboard, manifest: Self.manifest) { context in
            KeyboardDriver(context: context) { text, context in keyboard.keyPressed(text, in: context) }
        }
    }
}
