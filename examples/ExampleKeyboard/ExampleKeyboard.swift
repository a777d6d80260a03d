import Glibc
import TetherExtension

/// A keyboard that understands a few phrases, one per line:
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
        case "token" where words.count == 1:
            do {
                let token = try await context.accessToken()
                // Never the token itself: only that there is one.
                context.log("got an access token (\(token.utf8.count) bytes)")
            } catch {
                context.log("cannot get a token: \(error)")
            }
        case "sandbox" where words.count == 1:
            trySandbox(context)
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
        guard let base = (try? context.defaults["orders.url"])?.stringValue else {
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

    /// Past the SDK's own checks, straight to the kernel: without open
    /// access the sandbox refuses both (EACCES), whatever the code does.
    private func trySandbox(_ context: ExtensionContext) {
        let path = context.identity.group.path + "/keyboard-sandbox-probe"
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            unlink(path)
            context.log("sandbox: writing the group: allowed")
        } else {
            context.log("sandbox: writing the group: refused by the kernel (\(String(cString: strerror(errno))))")
        }
        let url = (try? context.defaults["orders.url"])?.stringValue ?? "http://127.0.0.1:80"
        let port = url.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) } ?? 80
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else {
            return context.log("sandbox: connecting to 127.0.0.1:\(port): refused by the kernel (\(String(cString: strerror(errno))))")
        }
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        context.log(connected == 0 ? "sandbox: connecting to 127.0.0.1:\(port): allowed"
            : "sandbox: connecting to 127.0.0.1:\(port): refused (\(String(cString: strerror(errno))))")
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
