import TetherJSON

/// The protocol versions spoken on the host's socket. An extension says its
/// version in `extension.hello`; one that says none speaks version 1 (the
/// protocol before versions, which shell and Python extensions still speak).
///
/// - 1: hello, pushes, reloads, defaults, features, tokens.
/// - 2: the host pings the extension (`extension.ping`, the watchdog) and
///   tells it before ending it for idleness (`extension.willTerminate`).
package enum HostProtocol {
    package static let current = 2
    package static let supported: ClosedRange<Int> = 1...2
    /// The longest time budget a push may be given, by `push.send` or an
    /// extension's hello: the host holds a push no longer than this (plus
    /// a second), whatever a client asks.
    package static let maximumPushBudgetMilliseconds = 60_000
    /// What a host speaking `current` offers, as hello's answer lists it.
    package static let capabilities = ["push", "reload", "defaults.changed", "feature", "token.get",
                                       "extension.start", "extension.ping", "extension.willTerminate", "host.metrics",
                                       "host.subscribe", "store.changed", "widget.entry", "notification.closed",
                                       "notification.action"]
}

extension RPCError {
    /// A hello in a protocol version the host does not speak. The message
    /// names the versions it does; `data` has them as {"supported": {min, max}}.
    package static func unsupportedProtocol(_ requested: JSONValue, supported: ClosedRange<Int>) -> RPCError {
        RPCError(code: unsupportedProtocolCode,
                 message: "protocol version \(requested) is not supported; this host speaks versions "
                          + "\(supported.lowerBound) to \(supported.upperBound)",
                 data: ["supported": ["min": .integer(supported.lowerBound), "max": .integer(supported.upperBound)]])
    }
    package static let unsupportedProtocolCode = -32002
}

/// The methods and notifications spoken on the host's socket, in one place
/// so the host, the SDK and the CLI cannot drift apart. Parameters are
/// described in the README ("The socket protocol").
package enum HostMethod {
    // Requests to the host.
    package static let ping = "host.ping"
    package static let status = "host.status"
    package static let featureStart = "feature.start"
    package static let featureStop = "feature.stop"
    package static let featureList = "feature.list"
    /// An extension introduces itself: {name, role, protocol?, sdk?, openAccess?,
    /// timeBudgetMilliseconds?} → {protocol, capabilities, host: {pid, version}, ...}.
    package static let hello = "extension.hello"
    /// Launch an extension of the host's manifests and wait for its hello: {name}.
    package static let extensionStart = "extension.start"
    /// End an extension the host started: {name}.
    package static let extensionStop = "extension.stop"
    /// The extensions, as `host.status` lists them.
    package static let extensionList = "extension.list"
    /// Route a payload through the notification extensions: {payload, budgetMilliseconds?}.
    package static let push = "push.send"
    /// Ask widgets to reload their timelines: {name?}.
    package static let reload = "widget.reload"
    /// Tell every other extension that shared defaults changed: {keys}.
    package static let defaultsChanged = "defaults.changed"
    /// A valid access token, refreshed by the host if due: how read-only
    /// roles get tokens under the host-brokered policy. Params: optional
    /// {"kind": "user"|"client"}. Result: {"accessToken", "expiresAt"}.
    package static let tokenGet = "token.get"
    /// The host's metrics as Prometheus text: {} → {"contentType", "text"}.
    package static let metrics = "host.metrics"
    /// Hear events (`HostNotification`'s extension.changed, feature.changed,
    /// store.changed) from now on: {events} → {events}. A hello may carry
    /// the same `events`. Nothing else is sent unasked, but host.stopping.
    package static let subscribe = "host.subscribe"
    /// A widget tells what it shows now: `WidgetEntry` → {}.
    package static let widgetEntry = "widget.entry"
    /// A widget's entry, and `widget.changed` for it from now on: {name} →
    /// `WidgetUpdate`. An on-demand widget with nothing to show is launched.
    package static let widgetWatch = "widget.watch"

    /// Every request method: what metrics count by name (any other is
    /// counted as "other", so a peer cannot grow the label set).
    package static let all: Set<String> = [
        ping, status, featureStart, featureStop, featureList, hello, extensionStart, extensionStop,
        extensionList, push, reload, defaultsChanged, tokenGet, metrics, subscribe, widgetEntry, widgetWatch,
    ]
}

package enum HostNotification {
    /// The host is shutting down; extensions it started will be stopped.
    /// To every connection, once.
    package static let stopping = "host.stopping"
    /// To subscribers: {name, running}
    package static let featureChanged = "feature.changed"
    /// To subscribers: {name, role, attached, pid}
    package static let extensionChanged = "extension.changed"
    /// To subscribers: a store of the group was replaced, {store:
    /// "defaults"|"credentials"}. How a launched widget hears of changes.
    package static let storeChanged = "store.changed"
    /// To widgets: reload now. {reason}
    package static let reload = "widget.reload"
    /// To every extension: {keys}
    package static let defaultsChanged = "defaults.changed"
    /// To the connections watching that widget (`widget.watch`): its
    /// entry changed, or it started or ended. `WidgetUpdate`.
    package static let widgetChanged = "widget.changed"

    /// To subscribers: a notification the host showed on the desktop was
    /// closed, {notification, id?, reason} (`DesktopNotificationEvent`).
    package static let notificationClosed = "notification.closed"
    /// To subscribers: an action of one was invoked, {notification, id?, action}.
    package static let notificationAction = "notification.action"

    /// What a connection may subscribe to (`Subscription`).
    package static let subscribable = [extensionChanged, featureChanged, storeChanged, notificationClosed, notificationAction]
    /// To an extension (protocol 2) the host is about to end because it is
    /// idle: {reason}. SIGTERM follows within a second.
    package static let willTerminate = "extension.willTerminate"
    /// To a client the host closes to make room: {reason}, the sentence the
    /// CLI prints (`RPCServer.goodbye`, `RPCConnection.goodbye`).
    package static let disconnecting = "host.disconnecting"
}

/// Requests the host sends to an extension.
package enum ExtensionMethod {
    /// To a notification extension: {payload, budgetMilliseconds} → {content, modified, timedOut}.
    package static let receivePush = "notification.receive"
    /// The watchdog (protocol 2): {} → {}. Answered on the extension's loop,
    /// so a blocked loop goes unanswered.
    package static let ping = "extension.ping"
}
