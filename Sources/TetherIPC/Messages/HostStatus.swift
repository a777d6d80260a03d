import TetherJSON

/// `host.status`'s answer, which `tether status --json` prints as it is
/// (docs/commands.md).
package struct HostStatus: Sendable, Equatable {
    package var pid: Int32
    /// When the host took its lock (ISO 8601).
    package var since: String
    /// Seconds since it started.
    package var uptime: Double
    package var group: String
    package var socket: String
    /// The first of them, or all (`StatusRequest.limit`).
    package var extensions: [ExtensionStatus]
    /// How many there are, listed or not.
    package var extensionCount: Int
    package var features: [String]
    /// Client connections (what `--max-connections` counts).
    package var connections: Int
    /// Extensions' links, apart from clients.
    package var extensionLinks: Int
    package var maximumConnections: Int
    /// Extensions that may run at once under the host's descriptor limit.
    package var maximumRunningExtensions: Int
    package var replyBudgetBytes: Int
    package var maximumFeatures: Int
    package var evictedConnections: Int
    /// Lines of the host's own output dropped for a slow or closed reader.
    package var droppedLogLines: Int
    /// Whether delivered pushes are shown on the desktop, and why not.
    package var desktopNotifications: DesktopNotificationsStatus
    /// Whether the keyboards are input methods (IBus engines), and why not.
    package var inputMethod: InputMethodStatus
    /// Whether extensions run in cgroups of their own, and why not (nil: a host that does not say).
    package var cgroups: CgroupsStatus?

    package init(pid: Int32, since: String, uptime: Double, group: String, socket: String, extensions: [ExtensionStatus],
                 features: [String], connections: Int, extensionLinks: Int, maximumConnections: Int, replyBudgetBytes: Int,
                 maximumFeatures: Int, evictedConnections: Int, droppedLogLines: Int,
                 desktopNotifications: DesktopNotificationsStatus = DesktopNotificationsStatus(state: .off),
                 inputMethod: InputMethodStatus = InputMethodStatus(state: .noKeyboards), maximumRunningExtensions: Int = 0,
                 extensionCount: Int? = nil, cgroups: CgroupsStatus? = nil) {
        self.pid = pid
        self.since = since
        self.uptime = uptime
        self.group = group
        self.socket = socket
        self.extensions = extensions
        self.extensionCount = extensionCount ?? extensions.count
        self.features = features
        self.connections = connections
        self.extensionLinks = extensionLinks
        self.maximumConnections = maximumConnections
        self.maximumRunningExtensions = maximumRunningExtensions
        self.replyBudgetBytes = replyBudgetBytes
        self.maximumFeatures = maximumFeatures
        self.evictedConnections = evictedConnections
        self.droppedLogLines = droppedLogLines
        self.desktopNotifications = desktopNotifications
        self.inputMethod = inputMethod
        self.cgroups = cgroups
    }

    private enum Field {
        static let pid = "pid", since = "since", uptime = "uptime", group = "group", socket = "socket"
        static let extensions = "extensions", extensionCount = "extensionCount", features = "features"
        static let connections = "connections"
        static let extensionLinks = "extensionLinks", limits = "limits", maximumConnections = "maximumConnections"
        static let maximumRunningExtensions = "maximumRunningExtensions"
        static let replyBudgetBytes = "replyBudgetBytes", maximumFeatures = "maximumFeatures"
        static let evictedConnections = "evictedConnections", droppedLogLines = "droppedLogLines"
        static let desktopNotifications = "desktopNotifications", inputMethod = "inputMethod", cgroups = "cgroups"
    }

    /// Read leniently, as a client reads a host of another release: what
    /// is missing reads as empty or zero.
    package init(json: JSONValue) {
        func int(_ value: JSONValue?) -> Int { value?.intValue ?? 0 }
        let limits = json[Field.limits]
        self.init(pid: Int32(clamping: int(json[Field.pid])), since: json[Field.since]?.stringValue ?? "",
                  uptime: json[Field.uptime]?.numberValue?.doubleValue ?? 0, group: json[Field.group]?.stringValue ?? "",
                  socket: json[Field.socket]?.stringValue ?? "",
                  extensions: (json[Field.extensions]?.arrayValue ?? []).map(ExtensionStatus.init(json:)),
                  features: (json[Field.features]?.arrayValue ?? []).compactMap(\.stringValue),
                  connections: int(json[Field.connections]), extensionLinks: int(json[Field.extensionLinks]),
                  maximumConnections: int(limits?[Field.maximumConnections]),
                  replyBudgetBytes: int(limits?[Field.replyBudgetBytes]), maximumFeatures: int(limits?[Field.maximumFeatures]),
                  evictedConnections: int(json[Field.evictedConnections]), droppedLogLines: int(json[Field.droppedLogLines]),
                  desktopNotifications: DesktopNotificationsStatus(json: json[Field.desktopNotifications]),
                  inputMethod: InputMethodStatus(json: json[Field.inputMethod]),
                  maximumRunningExtensions: int(limits?[Field.maximumRunningExtensions]),
                  extensionCount: json[Field.extensionCount]?.intValue, cgroups: CgroupsStatus(json: json[Field.cgroups]))
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.pid: .integer(Int(pid)), Field.since: .string(since), Field.uptime: .double(uptime),
         Field.group: .string(group), Field.socket: .string(socket), Field.extensions: .array(extensions.map(\.json)),
         Field.extensionCount: .integer(extensionCount),
         Field.features: .array(features.map(JSONValue.string)), Field.connections: .integer(connections),
         Field.extensionLinks: .integer(extensionLinks),
         Field.limits: [Field.maximumConnections: .integer(maximumConnections),
                        Field.maximumRunningExtensions: .integer(maximumRunningExtensions),
                        Field.replyBudgetBytes: .integer(replyBudgetBytes), Field.maximumFeatures: .integer(maximumFeatures)],
         Field.evictedConnections: .integer(evictedConnections), Field.droppedLogLines: .integer(droppedLogLines),
         Field.desktopNotifications: desktopNotifications.json, Field.inputMethod: inputMethod.json]
        if let cgroups { object[Field.cgroups] = cgroups.json }
        return .object(object)
    }
}
