import Glibc
import TetherExtension

/// What `ExampleKeyboard` does with each phrase it understands.
@ExtensionActor
enum Phrases {
    static func start(_ name: String, _ context: ExtensionContext) async {
        do {
            let started = try await context.startFeature(name)
            context.log("asked the host: \(name) \(started ? "started" : "was already running")")
        } catch {
            context.log("cannot start \(name): \(error)")
        }
    }

    static func stop(_ name: String, _ context: ExtensionContext) async {
        do {
            try await context.stopFeature(name)
            context.log("asked the host: \(name) stopped")
        } catch {
            context.log("cannot stop \(name): \(error)")
        }
    }

    static func token(_ context: ExtensionContext) async {
        do {
            let token = try await context.accessToken()
            // Never the token itself: only that there is one.
            context.log("got an access token (\(token.utf8.count) bytes)")
        } catch {
            context.log("cannot get a token: \(error)")
        }
    }

    static func note(_ text: String, _ context: ExtensionContext) {
        do {
            try context.container.write("keyboard-note", Array(text.utf8))
            context.log("note saved")
        } catch {
            context.log("cannot save the note: \(error)")
        }
    }

    static func order(_ id: String, _ context: ExtensionContext) async {
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
    static func sandbox(_ context: ExtensionContext) {
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

    static func isRunning(_ name: String, _ context: ExtensionContext) {
        do {
            let status = try context.featureStatus(name)
            let holder = status.holder.map { " (pid \($0.pid))" } ?? ""
            context.log(status.running ? "\(name) is running\(holder)" : "\(name) is not running")
        } catch {
            context.log("cannot tell: \(error)")
        }
    }
}
