/// Every request the host answers, described once (invariant 29): its
/// name, its parameters and answer, and who may call it. The host routes
/// by these (`HostRouter`), the read-only allowlist is derived from their
/// access, and callers call with their types.
public enum HostMethods {
    public static let ping = MethodDescriptor<NoFields, PingAnswer>(HostMethod.ping, sender: .client)
    public static let status = MethodDescriptor<StatusRequest, HostStatus>(HostMethod.status, sender: .client)
    /// The role's openURL hop: a read-only keyboard may ask it.
    public static let featureStart = MethodDescriptor<NamedTarget, FeatureStarted>(HostMethod.featureStart, sender: .client)
    public static let featureStop = MethodDescriptor<NamedTarget, FeatureStopped>(HostMethod.featureStop, sender: .client,
                                                                              access: .relaying)
    public static let featureList = MethodDescriptor<NoFields, FeatureListing>(HostMethod.featureList, sender: .client)
    public static let hello = MethodDescriptor<ExtensionHello, HelloAnswer>(HostMethod.hello, sender: .extensionOf(role: nil))
    public static let extensionStart = MethodDescriptor<NamedTarget, ExtensionStatus>(HostMethod.extensionStart, sender: .client,
                                                                                 access: .relaying)
    /// No extension ends another: the user does.
    public static let extensionStop = MethodDescriptor<NamedTarget, ExtensionStopped>(HostMethod.extensionStop, sender: .client,
                                                                                access: .user)
    public static let extensionList = MethodDescriptor<NoFields, ExtensionListing>(HostMethod.extensionList, sender: .client)
    public static let push = MethodDescriptor<PushRequest, PushAnswer>(HostMethod.push, sender: .client, access: .relaying)
    public static let reload = MethodDescriptor<ReloadRequest, ReloadAnswer>(HostMethod.reload, sender: .client, access: .relaying)
    public static let defaultsChanged = MethodDescriptor<DefaultsChange, DefaultsRelayed>(HostMethod.defaultsChanged, sender: .client,
                                                                                     access: .relaying)
    public static let tokenGet = MethodDescriptor<TokenRequest, TokenGrant>(HostMethod.tokenGet, sender: .client)
    /// Every extension's counters: the user's to read.
    public static let metrics = MethodDescriptor<NoFields, MetricsAnswer>(HostMethod.metrics, sender: .client, access: .user)
    public static let subscribe = MethodDescriptor<Subscription, Subscription>(HostMethod.subscribe, sender: .client)
    public static let widgetEntry = MethodDescriptor<WidgetEntry, NoFields>(HostMethod.widgetEntry, sender: .extensionOf(role: "widget"),
                                                                            access: .relaying)
    /// It may launch an idle widget.
    public static let widgetWatch = MethodDescriptor<WidgetWatchRequest, WidgetUpdate>(HostMethod.widgetWatch, sender: .client,
                                                                            access: .relaying)
}
