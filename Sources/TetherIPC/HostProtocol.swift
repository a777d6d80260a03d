/// The methods and notifications spoken on the host's socket, in one place
/// so the host, the SDK and the CLI cannot drift apart. Parameters are
/// described in the README ("The socket protocol").
public enum HostMethod {
    // Requests to the host.
    public static let ping = "host.ping"
    public static let status = "host.status"
    public static let featureStart = "feature.start"
    public static let featureStop = "feature.stop"
    public static let featureList = "feature.list"
    /// An extension introduces itself: {name, role, openAccess, timeBudgetMilliseconds?}.
    public static let hello = "extension.hello"
    /// Route a payload through the notification extensions: {payload, budgetMilliseconds?}.
    public static let push = "push.send"
    /// Ask widgets to reload their timelines: {name?}.
    public static let reload = "widget.reload"
    /// Tell every other extension that shared defaults changed: {keys}.
    public static let defaultsChanged = "defaults.changed"
    /// A valid access token, refreshed by the host if due: how read-only
    /// roles get tokens under the host-brokered policy. Params: optional
    /// {"kind": "user"|"client"}. Result: {"accessToken", "expiresAt"}.
    public static let tokenGet = "token.get"
}

public enum HostNotification {
    /// The host is shutting down; extensions it started will be stopped.
    public static let stopping = "host.stopping"
    /// {name, running}
    public static let featureChanged = "feature.changed"
    /// {name, role, attached, pid}
    public static let extensionChanged = "extension.changed"
    /// To widgets: reload now. {reason}
    public static let reload = "widget.reload"
    /// To every extension: {keys}
    public static let defaultsChanged = "defaults.changed"
}

/// Requests the host sends to an extension.
public enum ExtensionMethod {
    /// To a notification extension: {payload, budgetMilliseconds} → {content, modified, timedOut}.
    public static let receivePush = "notification.receive"
}
