/// A keyboard extension: an input method. Where an IBus daemon runs, the
/// host makes each keyboard an engine (`tether:NAME`, chosen with `ibus
/// engine tether:NAME` or the desktop's input settings); each key of the
/// focused field then goes to `handle(_:with:in:)`, which edits the field
/// through the `TextDocumentProxy` and says whether it took the key. A key
/// it does not answer within 100 ms goes to the application unhandled, and
/// its edits are dropped. Password and PIN fields never reach it.
///
/// Started by hand, a keyboard also reads lines on standard input, each a
/// phrase for `keyPressed`, one at a time: "start X" then "is X running?"
/// reads as typed. One that throws has its error printed, and the
/// keyboard goes on.
///
/// A keyboard can ask whether a feature is running (`context.isFeatureRunning`)
/// and ask the host to start one (`context.startFeature`, the openURL hop).
/// Without `"openAccess": true` in its manifest its group access is
/// read-only and what it types goes only into the focused field.
@ExtensionActor
public protocol Keyboard {
    /// Made once, before the first key.
    init()
    /// One line of input; a thrown error is logged, and the next line still comes.
    func keyPressed(_ text: String, in context: ExtensionContext) async throws
    /// One key of the focused field: true if the keyboard took it (its
    /// edits are applied), false to let the application have it. By
    /// default every key goes to the application.
    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool
}

extension Keyboard {
    public func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        false
    }

    /// Runs the keyboard: attaches to a host, confines itself when started
    /// by hand, and takes keys and input until it ends. `@main` calls it.
    public nonisolated static func main() {
        ExtensionMain.run(role: .keyboard, manifest: { EmbeddedManifest.embedded }) { context in
            KeyboardDriver(keyboard: Self(), context: context)
        }
    }
}
