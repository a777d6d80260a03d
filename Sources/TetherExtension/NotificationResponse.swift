import TetherIPC

/// What became of a notification the host showed on the desktop: closed,
/// or one of its actions invoked (iOS's `UNNotificationResponse`). Told to
/// `NotificationService.didReceiveResponse` while the extension runs.
public struct NotificationResponse: Sendable, Equatable {
    /// The payload's `id`, if it had one.
    public let id: String?
    /// The action's key (`actions[].key` of the payload); nil when closed.
    public let action: String?
    /// Why it closed, as org.freedesktop.Notifications numbers it: 1
    /// expired, 2 dismissed by the user, 3 closed by a call, 4 other; nil
    /// for an action.
    public let closeReason: Int?

    init(_ event: DesktopNotificationEvent) {
        id = event.id
        action = event.action
        closeReason = event.reason.map(Int.init)
    }
}
