import TetherIPC
import TetherManifest

/// An extension connected to the host's socket that said hello: one of the
/// host's children, or an instance started by hand.
struct AttachedExtension {
    let name: String
    let role: ExtensionRole
    /// From the kernel (`SO_PEERCRED`), not from the message.
    let pid: Int32
    /// Started by this host (its pid is a supervised child's).
    let managed: Bool
    /// From the host's manifest of that name when it has one, else as claimed.
    let openAccess: Bool
    /// The extension's own budget for rewriting a push, if it said.
    let timeBudgetMilliseconds: UInt64?
    /// The protocol version agreed in its hello.
    let protocolVersion: Int
    let connection: RPCConnection
    /// Pings it, when its protocol and manifest allow.
    var watchdog: Watchdog?

    /// Host calls (pushes) it has not answered yet.
    var pendingCalls: Int { connection.pendingCalls }

    /// As `extension.changed` tells it, and `status` lists one started by hand.
    var status: ExtensionStatus {
        var status = ExtensionStatus(name: name, role: role.rawValue, pid: pid)
        status.managed = managed
        status.openAccess = openAccess
        status.protocolVersion = protocolVersion
        return status
    }

    /// `status`, with whether it is attached (for `extension.changed`).
    func status(attached: Bool) -> JSONValue {
        var status = self.status
        status.attached = attached
        return status.json
    }
}
