/// Every request the host answers, described once (invariant 29): its
/// name, its parameters and answer, and who may call it. The host routes
/// by these (`HostRouter`), the read-only allowlist is derived from their
/// access, and callers call with their types.
package enum HostMethods {
    package static let ping = MethodDescriptor<NoFields, PingAnswer>(HostMethod.ping, sender: .client)
    package static let status = MethodDescriptor<StatusRequest, HostStatus>(HostMethod.status, sender: .client)
    /// The role's openURL hop: a read-only keyboard may ask it.
    package static let featureStart = MethodDescriptor<NamedTarget, FeatureStarted>(HostMethod.featureStart, sender: .client)
    package static let featureStop = MethodDescriptor<NamedTarget, FeatureStopped>(HostMethod.featureStop, sender: .client,
                                                                              access: .relaying)
    package static let featureList = MethodDescriptor<NoFields, FeatureListing>(HostMethod.featureList, sender: .client)
    package static let hello = MethodDescriptor<ExtensionHello, HelloAnswer>(HostMethod.hello, sender: .extensionOf(role: nil))
    package static let extensionStart = MethodDescriptor<NamedTarget, ExtensionStatus>(HostMethod.extensionStart, sender: .client,
                                                                                 access: .relaying)
    /// How long `extension.start` waits for the hello before answering
    /// `attached: false` (a shell extension may never say one): the host's
    /// wait, and what its callers allow for it.
    package static let extensionStartWaitMilliseconds: UInt64 = 10_000
    /// No extension ends another: the user does.
    package static let extensionStop = MethodDescriptor<NamedTarget, ExtensionStopped>(HostMethod.extensionStop, sender: .client,
                                                                                access: .user)
    package static let extensionList = MethodDescriptor<NoFields, ExtensionListing>(HostMethod.extensionList, sender: .client)
    package static let push = MethodDescriptor<PushRequest, PushAnswer>(HostMethod.push, sender: .client, access: .relaying)
    package static let reload = MethodDescriptor<ReloadRequest, ReloadAnswer>(HostMethod.reload, sender: .client, access: .relaying)
    package static let defaultsChanged = MethodDescriptor<DefaultsChange, DefaultsRelayed>(HostMethod.defaultsChanged, sender: .client,
                                                                                     access: .relaying)
    package static let tokenGet = MethodDescriptor<TokenRequest, TokenGrant>(HostMethod.tokenGet, sender: .client)
    /// Every extension's counters: the user's to read.
    package static let metrics = MethodDescriptor<NoFields, MetricsAnswer>(HostMethod.metrics, sender: .client, access: .user)
    package static let subscribe = MethodDescriptor<Subscription, Subscription>(HostMethod.subscribe, sender: .client)
    package static let widgetEntry = MethodDescriptor<WidgetEntry, NoFields>(HostMethod.widgetEntry, sender: .extensionOf(role: "widget"),
                                                                             access: .relaying)
    /// It may launch an idle widget.
    package static let widgetWatch = MethodDescriptor<WidgetWatchRequest, WidgetUpdate>(HostMethod.widgetWatch, sender: .client,
                                                                            access: .relaying)
}
