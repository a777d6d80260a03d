import TetherExtension

/// A keyboard that understands a few phrases, one per line:
///   is NAME running?   probes the feature's lock (no host needed)
///   start NAME         asks the host to start it (the openURL hop)
///   stop NAME          asks the host to stop it (needs open access)
///   note TEXT          saves TEXT to the group's shared files (needs open access)
///   order ID           fetches an order from `orders.url` with the group's token
/// Anything else is echoed as typed.
@main
struct ExampleKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {
        let words = text.split(separator: " ").map(String.init)
        switch words.first {
        case "is" where words.count == 3 && words[2].hasPrefix("running"):
            answerIsRunning(words[1], context)
        case "start" where words.count == 2:
            do {
                let started = try await context.startFeature(words[1])
                context.log("asked the host: \(words[1]) \(started ? "started" : "was already running")")
            } catch {
                context.log("cannot start \(words[1]): \(error)")
            }
        case "stop" where words.count == 2:
            do {
                try await context.stopFeature(words[1])
                context.log("asked the host: \(words[1]) stopped")
            } catch {
                context.log("cannot stop \(words[1]): \(error)")
            }
        case "order" where words.count == 2:
            await showOrder(words[1], context)
        case "note" where words.count > 1:
            do {
                try context.container.write("keyboard-note", Array(words.dropFirst().joined(separator: " ").utf8))
                context.log("note saved")
            } catch {
                context.log("cannot save the note: \(error)")
            }
        default:
            context.log("typed: \(text)")
        }
    }

    private func showOrder(_ id: String, _ context: ExtensionContext) async {
        guard let base = (try? context.defaults.value(forKey: "orders.url"))??.stringValue else {
            return context.log("cannot fetch order \(id): no orders.url in the defaults")
        }
        // A keyboard without open access gets its token from the host.
        do {
            let order = try await context.fetchJSON("\(base)/\(id)")
            context.log("order \(id): \(order["item"]?.stringValue ?? "?") is \(order["status"]?.stringValue ?? "?")")
        } catch {
            context.log("cannot fetch order \(id): \(error)")
        }
    }

    private func answerIsRunning(_ name: String, _ context: ExtensionContext) {
        do {
            let status = try context.featureStatus(name)
            let holder = status.holder.map { " (pid \($0.pid))" } ?? ""
            context.log(status.running ? "\(name) is running\(holder)" : "\(name) is not running")
        } catch {
            context.log("cannot tell: \(error)")
        }
    }
}
