import TetherExtension

/// An input method with one shortcut, from the founding story: typing
/// `;rec` then a space in any application types `recording on ` or
/// `recording off `, from the recording feature's lock (the keyboard asks
/// whether its app's recording runs). Every other key goes to the
/// application as typed.
///
/// Started by hand, it also understands a few phrases, one per line:
///   is NAME running?   probes the feature's lock (no host needed)
///   start NAME         asks the host to start it (the openURL hop)
///   stop NAME          asks the host to stop it (needs open access)
///   note TEXT          saves TEXT to the group's shared files (needs open access)
///   order ID           fetches an order from `orders.url` with the group's token (needs open access)
///   token              asks for an access token (through the host without open access)
///   sandbox            tries what the kernel refuses a keyboard without open access:
///                      writing the group and connecting to `orders.url`'s server
/// Anything else is echoed as typed.
@main
final class ExampleKeyboard: Keyboard {
    static let shortcut = ";rec"
    /// What was typed lately, for applications that tell no text around the cursor.
    private var typed = ""

    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        let before = proxy.documentContextBeforeInput ?? typed
        guard key.characters == " ", before.hasSuffix(Self.shortcut) else {
            remember(key)
            return false
        }
        typed = ""
        for _ in Self.shortcut { proxy.deleteBackward() }
        let running = (try? context.isFeatureRunning("recording")) == true
        proxy.insertText(running ? "recording on " : "recording off ")
        return true
    }

    private func remember(_ key: KeyEvent) {
        if key.keyCode == 0xff08 { typed = String(typed.dropLast()) } else { typed += key.characters }
        typed = String(typed.suffix(Self.shortcut.count))
    }

    func keyPressed(_ text: String, in context: ExtensionContext) async throws {
        let words = text.split(separator: " ").map(String.init)
        switch (words.first, words.count) {
        case ("is", 3) where words[2].hasPrefix("running"): Phrases.isRunning(words[1], context)
        case ("start", 2): await Phrases.start(words[1], context)
        case ("stop", 2): await Phrases.stop(words[1], context)
        case ("order", 2): await Phrases.order(words[1], context)
        case ("token", 1): await Phrases.token(context)
        case ("sandbox", 1): Phrases.sandbox(context)
        case ("note", let count) where count > 1: Phrases.note(words.dropFirst().joined(separator: " "), context)
        default: context.log("typed: \(text)")
        }
    }
}
