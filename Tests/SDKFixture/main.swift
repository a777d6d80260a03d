import TetherExtension
#if canImport(Glibc)
import Glibc
#endif

// Extensions for the SDK's tests, one executable: the first argument picks
// the role and behaviour. Not an example: each does one thing a test checks.
switch CommandLine.arguments.dropFirst().first {
case "slow-widget": SlowWidget.main()
case "flaky-widget": FlakyWidget.main()
case "budget-notification": BudgetNotification.main()
case "fetch-keyboard": FetchKeyboard.main()
case "user-data-keyboard": UserDataKeyboard.main()
case "logging-widget": LoggingWidget.main()
default:
    print("usage: SDKFixture slow-widget|flaky-widget|budget-notification|fetch-keyboard|user-data-keyboard|logging-widget [--name N --group DIR ...]")
    exit(2)
}

/// The value after `--flag` in the extension's arguments.
@ExtensionActor
func option(_ flag: String, in context: ExtensionContext) -> String? {
    guard let index = context.arguments.firstIndex(of: flag), index + 1 < context.arguments.count else { return nil }
    return context.arguments[index + 1]
}

/// Awaits a fetch (`--url`, a server that answers slowly) inside its
/// timeline; says when each call starts, so reloads asked for meanwhile can
/// be seen to wait for it.
struct SlowWidget: Widget {
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        context.log("timeline call (\(reason.rawValue)) started")
        let orders = try await context.fetchJSON(option("--url", in: context) ?? "")["orders"]?.arrayValue ?? []
        return Timeline(entries: [TimelineEntry(date: .now, content: "\(orders.count) orders")], policy: .never)
    }
}

/// Logs through `context.logger`: a warning with metadata, then an info.
struct LoggingWidget: Widget {
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        context.logger.warning("low stock", metadata: ["sku": "A1", "left": "3"])
        context.logger.debug("not shown at the default level")
        context.logger.info("timeline ready")
        return Timeline(entries: [TimelineEntry(date: .now, content: "ok")], policy: .never)
    }
}

struct FixtureFailure: Error, CustomStringConvertible {
    let description: String
}

/// Throws `--failures N` times (2), then shows "ok".
struct FlakyWidget: Widget {
    static var calls = 0

    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        Self.calls += 1
        let failures = option("--failures", in: context).flatMap(Int.init) ?? 2
        if Self.calls <= failures { throw FixtureFailure(description: "no data yet (call \(Self.calls))") }
        return Timeline(entries: [TimelineEntry(date: .now, content: "ok after \(Self.calls - 1) failures")], policy: .never)
    }
}

/// Sleeps the payload's "sleepMs" (cancellable) and says whether it was
/// cancelled; `timeWillExpire` gives a "partial" title when the payload asks.
struct BudgetNotification: NotificationService {
    func didReceive(_ request: NotificationRequest, in context: ExtensionContext) async throws -> NotificationContent {
        let sleep = request.content["sleepMs"]?.intValue ?? 0
        context.log("didReceive started, budget \(request.budget)")
        if let url = request.content["fetch"]?.stringValue {
            do {
                _ = try await context.fetchJSON(url)
                context.log("didReceive fetched")
            } catch {
                context.log("didReceive fetch ended: \(error)")
                throw error
            }
        }
        do {
            try await Task.sleep(for: .milliseconds(sleep))
        } catch {
            context.log("didReceive cancelled")
            throw error
        }
        if request.content["throw"]?.boolValue == true { throw FixtureFailure(description: "could not rewrite") }
        var content = request.content
        content.title = "rewritten"
        return content
    }

    func timeWillExpire(_ request: NotificationRequest, in context: ExtensionContext) -> NotificationContent? {
        guard request.content["partial"]?.boolValue == true else {
            context.log("timeWillExpire: nothing")
            return nil
        }
        context.log("timeWillExpire: partial")
        var content = request.content
        content.title = "partial"
        return content
    }
}

/// "fetch URL" fetches and says how many orders came; "fetch-many N URL"
/// fetches N at once and says how many succeeded; "threads" says how many
/// threads the process has; "throw" throws.
struct FetchKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {
        let words = text.split(separator: " ").map(String.init)
        switch words.first {
        case "fetch" where words.count == 2:
            do {
                let orders = try await context.fetchJSON(words[1])["orders"]?.arrayValue ?? []
                context.log("fetched \(orders.count) orders")
            } catch {
                context.log("fetch failed: \(error)")
            }
        case "fetch-many" where words.count == 3:
            // N fetches at once, all through this process's one loop.
            let count = Int(words[1]) ?? 0
            let url = words[2]
            let fetched = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<count { group.addTask { @ExtensionActor in (try? await context.fetchJSON(url)) != nil } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            context.log("fetched \(fetched) of \(count)")
        case "threads":
            context.log("threads \(ThreadCount.current)")
        case "throw":
            throw FixtureFailure(description: "the key could not be handled")
        default:
            context.log("typed: \(text)")
        }
    }
}

/// "write" stores one defaults key and one shared file marked user-scoped
/// (`setUserScoped`, `write(userScoped: true)`) and one of each unmarked;
/// needs open access (`TETHER_OPEN_ACCESS=1`).
struct UserDataKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {
        guard text == "write" else { return context.log("typed: \(text)") }
        try context.setUserScoped(["1041"], forKey: "orders")
        try context.defaults.set("dark", forKey: "theme")
        try context.container.write("inbox", Array("alice's messages".utf8), userScoped: true)
        try context.container.write("logo", Array("the app's".utf8))
        context.log("wrote user data")
    }
}

/// The process's threads, as /proc/self/status counts them.
enum ThreadCount {
    static var current: Int {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return -1 }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
        return Int(line.dropFirst("Threads:".count).trimmingPrefix(while: { $0 == " " || $0 == "\t" })) ?? -1
    }
}
