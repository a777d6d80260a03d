import TetherIPC

/// Runs one role on top of an `ExtensionContext`: what to do at start, and
/// with what the host sends.
@ExtensionActor
protocol RoleDriver: AnyObject {
    /// Extra fields for the hello message.
    var helloFields: [String: JSONValue] { get }
    func begin()
    func hostEvent(_ event: HostLink.Event)
}

extension RoleDriver {
    var helloFields: [String: JSONValue] { [:] }
}
