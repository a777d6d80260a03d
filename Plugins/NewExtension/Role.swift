/// The three roles, and the starting code for each.
enum Role: String {
    case widget, keyboard, notification

    func source(typeName name: String) -> String {
        switch self {
        case .widget:
            return """
                import Foundation
                import TetherExtension

                /// A widget: a timeline of entries, reloaded by its policy, when the host
                /// asks (`tether reload`) and when the shared defaults change
                /// (`tether defaults set greeting '"Howdy"'`).
                @main
                struct \(name): Widget {
                    /// Checked and embedded at build time from \(name).extension.json.
                    static let manifest: EmbeddedManifest? = .built

                    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
                        let greeting = (try? context.defaults.value(forKey: "greeting"))??.stringValue ?? "Hello"
                        let entry = TimelineEntry(date: Date(), content: "\\(greeting) from \\(context.name)")
                        return Timeline(entries: [entry], policy: .never)
                    }
                }

                """
        case .keyboard:
            return """
                import TetherExtension

                /// A keyboard: each line on standard input is a key press. Try
                /// "is recording running?" (it probes the feature's lock).
                @main
                struct \(name): Keyboard {
                    /// Checked and embedded at build time from \(name).extension.json.
                    static let manifest: EmbeddedManifest? = .built

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
            return """
                import TetherExtension

                /// A notification service: rewrites each push within its time budget
                /// (`tether push '{"title":"Hello","body":"..."}'`).
                @main
                struct \(name): NotificationService {
                    /// Checked and embedded at build time from \(name).extension.json.
                    static let manifest: EmbeddedManifest? = .built

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
