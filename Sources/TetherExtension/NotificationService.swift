import TetherIPC

/// A notification service extension: the host hands it each push payload;
/// `didReceive` may rewrite the content (fetch, decrypt, enrich) and returns
/// it. Within the time budget, as on iOS:
/// - about a second before the budget ends (at its end, for budgets under
///   2 s), if `didReceive` has not returned, `timeWillExpire` is asked for
///   a best-effort content (iOS's `serviceExtensionTimeWillExpire`);
/// - at the end, `didReceive` is cancelled and the original is delivered,
///   unless `timeWillExpire` gave a content;
/// - a `didReceive` that throws delivers the original.
@ExtensionActor
public protocol NotificationService {
    /// Made once, before the first notification.
    init()
    /// How long a rewrite may take, unless the push sets its own budget.
    static var timeBudget: Duration { get }
    /// The notification rewritten, within `request.budget`; past it the
    /// host delivers the original.
    func didReceive(_ request: NotificationRequest, in context: ExtensionContext) async throws -> NotificationContent
    /// Called shortly before the budget ends if `didReceive` has not
    /// returned: a best-effort content, or nil for the original.
    func timeWillExpire(_ request: NotificationRequest, in context: ExtensionContext) -> NotificationContent?
    /// A notification the host showed on the desktop was closed, or one of
    /// its actions invoked, while this extension runs. Nothing by default.
    func didReceiveResponse(_ response: NotificationResponse, in context: ExtensionContext)
}

extension NotificationService {
    public static var timeBudget: Duration { .seconds(30) }

    public func timeWillExpire(_ request: NotificationRequest, in context: ExtensionContext) -> NotificationContent? { nil }

    public func didReceiveResponse(_ response: NotificationResponse, in context: ExtensionContext) {}

    /// Runs the service: attaches to a host and answers its pushes until
    /// it ends. `@main` calls it.
    public nonisolated static func main() {
        ExtensionMain.run(role: .notification, manifest: { EmbeddedManifest.embedded }) { context in
            NotificationDriver(service: Self(), context: context, budget: Self.timeBudget)
        }
    }
}

/// A push as it arrived, and the budget it has.
public struct NotificationRequest: Sendable {
    /// What was pushed.
    public let content: NotificationContent
    /// How long the host waits for the rewrite.
    public let budget: Duration
}

/// The content of a notification: a JSON object, with the usual fields at hand.
public struct NotificationContent: Sendable, Equatable {
    /// Every field of the payload.
    public var fields: [String: JSONValue]

    /// A notification with these fields.
    public init(_ fields: [String: JSONValue]) { self.fields = fields }

    /// The `title` field, if it is a string.
    public var title: String? {
        get { fields["title"]?.stringValue }
        set { fields["title"] = newValue.map { .string($0) } }
    }

    /// The `body` field, if it is a string.
    public var body: String? {
        get { fields["body"]?.stringValue }
        set { fields["body"] = newValue.map { .string($0) } }
    }

    /// Any field of the payload.
    public subscript(key: String) -> JSONValue? {
        get { fields[key] }
        set { fields[key] = newValue }
    }
}
