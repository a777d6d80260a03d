import TetherIPC

/// A notification service extension: the host hands it each push payload;
/// it may rewrite the content (fetch, decrypt, enrich) and hands the result
/// to `contentHandler`, from any thread, once. If it does not within the
/// time budget, the original content is delivered instead, as on iOS.
public protocol NotificationService {
    init()
    /// The manifest embedded at build time by the TetherManifest plugin
    /// (`.built`), or nil (the default).
    static var manifest: EmbeddedManifest? { get }
    /// How long a rewrite may take, unless the push sets its own budget.
    static var timeBudget: Duration { get }
    func didReceive(_ request: NotificationRequest, in context: ExtensionContext,
                    contentHandler: @escaping @Sendable (NotificationContent) -> Void)
}

extension NotificationService {
    public static var timeBudget: Duration { .seconds(30) }

    public static var manifest: EmbeddedManifest? { nil }

    public static func main() {
        ExtensionMain.run(role: .notification, manifest: Self.manifest) { context in
            NotificationDriver(service: Self(), context: context, budget: Self.timeBudget)
        }
    }
}

/// A push as it arrived, and the budget it has.
public struct NotificationRequest: Sendable {
    public let content: NotificationContent
    public let budget: Duration
}

/// The content of a notification: a JSON object, with the usual fields at hand.
public struct NotificationContent: Sendable, Equatable {
    public var fields: [String: JSONValue]

    public init(_ fields: [String: JSONValue]) { self.fields = fields }

    public var title: String? {
        get { fields["title"]?.stringValue }
        set { fields["title"] = newValue.map { .string($0) } }
    }

    public var body: String? {
        get { fields["body"]?.stringValue }
        set { fields["body"] = newValue.map { .string($0) } }
    }

    public subscript(key: String) -> JSONValue? {
        get { fields[key] }
        set { fields[key] = newValue }
    }
}
