import TetherManifest

/// What a new extension starts as: its code and its manifest, per role.
/// The code names no manifest: the build plugin embeds it.
package struct ExtensionTemplate: Sendable {
    package let typeName: String
    package let role: ExtensionRole

    /// The manifest's name: the type name in kebab case (MyWidget → my-widget).
    package var manifestName: String { Self.kebabCase(typeName) }

    package init(typeName: String, role: ExtensionRole) {
        self.typeName = typeName
        self.role = role
    }

    /// The template for a name and a role as a person typed them, or why
    /// not in one sentence: the CLI and the plugin's tool say the same.
    package init(typeName: String, roleName: String) throws(ScaffoldError) {
        guard let role = ExtensionRole(rawValue: roleName) else {
            throw ScaffoldError("'\(roleName)' is not a role; use widget, keyboard or notification")
        }
        guard Self.isTypeName(typeName) else {
            throw ScaffoldError(typeName.utf8.count > 64
                ? "'\(typeName)' is longer than 64 letters and digits; use a shorter name"
                : "'\(typeName)' cannot name a Swift type and target; use letters and digits, starting with a letter")
        }
        self.init(typeName: typeName, role: role)
        guard TetherName.isValid(manifestName) else {
            throw ScaffoldError("'\(typeName)' makes the manifest name '\(manifestName)', longer than a name may be; use a shorter name")
        }
        if let taken = ReservedNames.reason(typeName, template: self) {
            throw ScaffoldError("'\(typeName)' is \(taken), so the new code would not build; choose another name")
        }
    }

    /// A Swift type and target name: an ASCII letter, then letters and
    /// digits, at most 64 (so the manifest's name fits its rule too).
    package static func isTypeName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func isLetter(_ b: UInt8) -> Bool { (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) }
        guard let first = bytes.first, isLetter(first), bytes.count <= 64 else { return false }
        return bytes.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) }
    }

    /// MyWidget → my-widget, HTTPClient → http-client.
    static func kebabCase(_ name: String) -> String {
        let bytes = Array(name.utf8)
        func isUpper(_ b: UInt8) -> Bool { (0x41...0x5a).contains(b) }
        func isLower(_ b: UInt8) -> Bool { (0x61...0x7a).contains(b) }
        var result: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            let previousNotUpper = index > 0 && !isUpper(bytes[index - 1])
            let nextLower = index + 1 < bytes.count && isLower(bytes[index + 1])
            if isUpper(byte), index > 0, previousNotUpper || nextLower { result.append(UInt8(ascii: "-")) }
            result.append(isUpper(byte) ? byte + 0x20 : byte)
        }
        return String(decoding: result, as: UTF8.self)
    }

    package var manifest: String {
        """
        {
          "name": "\(manifestName)",
          "role": "\(role.rawValue)",
          "executable": "\(typeName)",
          "arguments": [],
          "restart": "on-failure",
          "openAccess": false
        }

        """
    }

    package var source: String {
        switch role {
        case .widget:
            """
            import Foundation
            import TetherExtension

            /// A widget: a timeline of entries, reloaded by its policy, when the host
            /// asks (`tether reload`) and when the shared defaults change
            /// (`tether defaults set greeting '"Howdy"'`). Its manifest,
            /// \(typeName).extension.json, is checked and embedded at build time.
            @main
            struct \(typeName): Widget {
                func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
                    let greeting = (try? context.defaults["greeting"])?.stringValue ?? "Hello"
                    let entry = TimelineEntry(date: Date(), content: "\\(greeting) from \\(context.name)")
                    return Timeline(entries: [entry], policy: .never)
                }
            }

            """
        case .keyboard:
            """
            import TetherExtension

            /// A keyboard: each line on standard input is a key press. Try
            /// "is recording running?" (it probes the feature's lock). Its manifest,
            /// \(typeName).extension.json, is checked and embedded at build time.
            @main
            struct \(typeName): Keyboard {
                func keyPressed(_ text: String, in context: ExtensionContext) async throws {
                    let words = text.split(separator: " ").map(String.init)
                    if words.count == 3, words[0] == "is", words[2].hasPrefix("running") {
                        let running = (try? context.isFeatureRunning(words[1])) == true
                        context.log("\\(words[1]) is \\(running ? "running" : "not running")")
                    } else {
                        context.log("typed: \\(text)")
                    }
                }
            }

            """
        case .notification:
            """
            import TetherExtension

            /// A notification service: rewrites each push within its time budget
            /// (`tether push '{"title":"Hello","body":"..."}'`). Its manifest,
            /// \(typeName).extension.json, is checked and embedded at build time.
            @main
            struct \(typeName): NotificationService {
                func didReceive(_ request: NotificationRequest, in context: ExtensionContext) async throws -> NotificationContent {
                    var content = request.content
                    content.title = "[\\(context.name)] " + (content.title ?? "Notification")
                    return content
                }
            }

            """
        }
    }
}
