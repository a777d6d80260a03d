import TetherExtension
#if canImport(Glibc)
import Glibc
#endif

/// Says each key it is given (its text, its field's kind and the text
/// before the cursor) and takes none: what reaches a keyboard, seen.
struct KeyLoggingKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {}

    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        context.log("key '\(key.characters)' in a \(proxy.fieldKind) field after '\(proxy.documentContextBeforeInput ?? "")'"
                    + " (\(proxy.documentContextBeforeInput?.count ?? 0) characters)")
        return false
    }
}

/// Takes every key and types it twice, 150 ms late: past
/// its deadline, so the host has given each key to the application.
struct LateKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {}

    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        try? await Task.sleep(for: .milliseconds(150))
        proxy.insertText(key.characters + key.characters)
        return true
    }
}

/// Takes every key and never answers: each waits out its deadline.
struct SilentKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {}

    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        try? await Task.sleep(for: .seconds(3_600))
        proxy.insertText("never")
        return true
    }
}

/// Types each key upper-cased, and dies (SIGKILL) at the third key of each
/// run, before answering it: a keyboard that crashes mid-word.
struct CrashingKeyboard: Keyboard {
    static var keys = 0

    func keyPressed(_ text: String, in context: ExtensionContext) async throws {}

    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        Self.keys += 1
        if Self.keys == 3 { raise(SIGKILL) }
        return false
    }
}

/// Answers each key with 10,000 insertions: more than a key may do.
struct FloodingKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {}

    func handle(_ key: KeyEvent, with proxy: TextDocumentProxy, in context: ExtensionContext) async -> Bool {
        for _ in 0..<10_000 { proxy.insertText("z") }
        return true
    }
}
