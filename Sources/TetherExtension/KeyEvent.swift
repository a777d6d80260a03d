/// A key pressed in the focused field of an application, while this
/// keyboard is the input method (iOS's `UIKey`). Releases and shortcuts
/// (Control, Alt, Super) go to the application without reaching a keyboard.
public struct KeyEvent: Sendable, Equatable {
    /// The text the key types: a character, or "" for a key that types none
    /// (BackSpace, Return, arrows: tell them by `keyCode`).
    public let characters: String
    /// The key's X keysym: 0xff08 BackSpace, 0xff0d Return, 0xff09 Tab,
    /// 0xff51 to 0xff54 the arrows.
    public let keyCode: UInt32

    init(characters: String, keyCode: UInt32) {
        self.characters = characters
        self.keyCode = keyCode
    }
}
