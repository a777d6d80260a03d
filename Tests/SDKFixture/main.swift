import TetherExtension
import TetherAuth
import TetherGroup
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
case "fetch-widget": FetchWidget.main()
case "user-data-keyboard": UserDataKeyboard.main()
case "logging-widget": LoggingWidget.main()
case "rmdir-keyboard": RmdirKeyboard.main()
case "socket-keyboard": SocketKeyboard.main()
case "upsert-stress": UpsertStress.run()
case "bar-widget": BarWidget.main()
case "key-logging-keyboard": KeyLoggingKeyboard.main()
case "late-keyboard": LateKeyboard.main()
case "silent-keyboard": SilentKeyboard.main()
case "crashing-keyboard": CrashingKeyboard.main()
case "flooding-keyboard": FloodingKeyboard.main()
case "spare-without-descriptors": SpareWithoutDescriptors.run()
case "spawn-without-unshare": SpawnWithoutUnshare.run()
case "confine-without-descriptors", "grants-after-shortage": ConfinementUnderShortage.run(CommandLine.arguments[1])
default:
    print("usage: SDKFixture slow-widget|flaky-widget|budget-notification|fetch-keyboard|fetch-widget|user-data-keyboard|logging-widget|rmdir-keyboard|socket-keyboard|upsert-stress|bar-widget|key-logging-keyboard|late-keyboard|silent-keyboard|crashing-keyboard|flooding-keyboard|spare-without-descriptors|spawn-without-unshare [unshare|clone]|confine-without-descriptors|grants-after-shortage [--name N --group DIR ...]")
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

/// Logs through `context.log`: a warning with metadata, a debug record,
/// an info record with metadata, then a plain line.
struct LoggingWidget: Widget {
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        context.log("low stock", level: .warning, metadata: ["sku": "A1", "left": "3"])
        context.log("not shown at the default level", level: .debug)
        context.log("timeline ready", metadata: ["entries": "1"])
        context.log("a plain line")
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

/// "fetch URL" fetches and says how many orders came; "throw" throws.
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
        case "throw":
            throw FixtureFailure(description: "the key could not be handled")
        default:
            context.log("typed: \(text)")
        }
    }
}

/// `--count N` fetches of `--url` at once in its timeline, all through
/// this process's one loop; shows how many succeeded.
struct FetchWidget: Widget {
    func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
        let url = option("--url", in: context) ?? ""
        let count = option("--count", in: context).flatMap(Int.init) ?? 1
        // Tasks that inherit the actor, counted on it: a task group's
        // children, or awaiting `task.value`, would run on Swift's shared
        // pool (the fixture's threads, not the SDK's).
        let counter = FetchCounter(total: count)
        for _ in 0..<count { Task { counter.finished(await Self.fetches(url, in: context)) } }
        let fetched = await withCheckedContinuation { counter.waiter = $0 }
        return Timeline(entries: [TimelineEntry(date: .now, content: "fetched \(fetched) of \(count)")], policy: .never)
    }

    @ExtensionActor
    final class FetchCounter {
        let total: Int
        var done = 0, succeeded = 0
        var waiter: CheckedContinuation<Int, Never>?

        init(total: Int) { self.total = total }

        func finished(_ ok: Bool) {
            done += 1
            if ok { succeeded += 1 }
            if done == total { waiter?.resume(returning: succeeded) }
        }
    }

    /// One fetch: true if it answered JSON.
    static func fetches(_ url: String, in context: ExtensionContext) async -> Bool {
        do {
            _ = try await context.fetchJSON(url)
            return true
        } catch {
            return false
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

/// Its "rmdir PATH" key removes a directory and "list PATH" lists one, as
/// hostile code in a keyboard started by hand could try once the SDK has
/// confined it; "own" writes, reads and lists its TMPDIR. Says what the
/// kernel answered.
struct RmdirKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {
        func refused(_ what: String) -> String { "\(what): refused (\(String(cString: strerror(errno))))" }
        if text.hasPrefix("rmdir ") {
            let removed = rmdir(String(text.dropFirst("rmdir ".count))) == 0
            context.log(removed ? "rmdir: removed" : refused("rmdir"))
        } else if text.hasPrefix("list ") {
            guard let stream = opendir(String(text.dropFirst("list ".count))) else { return context.log(refused("list")) }
            closedir(stream)
            context.log("list: ok")
        } else if text == "own" {
            let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/nonexistent"
            let file = directory + "/own"
            let written = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard written >= 0 else { return context.log(refused("own")) }
            close(written)
            let read = open(file, O_RDONLY | O_CLOEXEC)
            guard read >= 0 else { return context.log(refused("own")) }
            close(read)
            guard let stream = opendir(directory) else { return context.log(refused("own")) }
            closedir(stream)
            context.log("own: ok \(directory)")
        } else {
            context.log("typed: \(text)")
        }
    }
}

/// Not an extension: COUNT atomic upserts into the group's credential store
/// (`--prefix P --count N --group DIR`), after a line on stdin says go;
/// prints "wrote N" after each, so a test can kill it mid-write.
enum UpsertStress {
    static func run() {
        let arguments = CommandLine.arguments
        func value(_ flag: String) -> String? {
            arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        guard let prefix = value("--prefix"), let count = Int(value("--count") ?? "250"), let path = value("--group"),
              let store = try? CredentialStore(group: GroupDirectory(path: path)) else {
            say("usage: SDKFixture upsert-stress --prefix P [--count N] --group DIR")
            exit(2)
        }
        say("ready")
        _ = readLine()
        for index in 0..<count {
            let key = "stress.\(prefix).\(index)"
            do {
                try store.shared.update { $0[key] = TokenSet(accessToken: "value-\(prefix)-\(index)").jsonValue }
            } catch {
                say("failed: \(error)")
                exit(1)
            }
            say("wrote \(index + 1)")
        }
    }

    /// A line on standard output, unbuffered (the test reads as it goes).
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}
