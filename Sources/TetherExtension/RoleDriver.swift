import TetherIPC

/// Runs one role on top of an `ExtensionContext`: what to do at start, and
/// with what the host sends.
@ExtensionActor
protocol RoleDriver: AnyObject {
    /// What the role adds to the hello (a budget, events to hear).
    func describe(_ hello: inout ExtensionHello)
    func begin()
    func hostEvent(_ event: HostLink.Event)
}

extension RoleDriver {
    func describe(_ hello: inout ExtensionHello) {}
}
