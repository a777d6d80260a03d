import TetherBus
#if canImport(Glibc)
import Glibc
#endif

/// Delegation from the authority (invariant 24): the user's service
/// manager (`systemd --user`) marks nothing on the cgroups of its units
/// (only PID 1 writes `user.delegate`), so where no mark says so it is
/// asked over D-Bus which unit runs this process, and whether it delegates
/// that unit's cgroup: `GetUnitByPID`, then the unit's `Delegate` and
/// `ControlGroup`. A service with `Delegate=yes` and a scope made by
/// `systemd-run --user --scope -p Delegate=yes` both answer yes.
public enum ServiceManagerDelegation {
    public struct Unit: Sendable, Equatable {
        public let name: String
        public let controlGroup: String
        public let delegated: Bool
    }

    /// How long each of its three calls may take.
    static let timeoutMilliseconds: UInt64 = 2_000

    /// The unit the user's manager runs `pid` in; nil with why where there
    /// is no such manager, or it has no unit for `pid`.
    public static func unit(of pid: Int32 = getpid()) -> Result<Unit, Failure> {
        // The bus a desktop session leaves, never an autolaunched one.
        let address: String
        switch SessionBusAddress.resolve() {
        case .success(let found): address = found
        case .failure(let noBus): return .failure(Failure(reason: "no session bus: \(noBus.reason)", noManager: true))
        }
        let bus: BlockingBus
        do {
            bus = try BlockingBus(address: address)
        } catch {
            return .failure(Failure(reason: "no session bus: \(error.reason)", noManager: true))
        }
        let manager = "org.freedesktop.systemd1"
        let path: String
        do {
            let answer = try bus.call(destination: manager, path: "/org/freedesktop/systemd1",
                                      interface: "org.freedesktop.systemd1.Manager", member: "GetUnitByPID",
                                      [.uint32(UInt32(bitPattern: pid))], timeoutMilliseconds: timeoutMilliseconds)
            guard let found = answer.first?.stringValue else {
                return .failure(Failure(reason: "the user's service manager: GetUnitByPID answered nothing", noManager: false))
            }
            path = found
        } catch {
            // No manager on this bus, or no unit of it holds the pid.
            return .failure(Failure(reason: "the user's service manager: \(error.reason)", noManager: true))
        }
        do {
            func text(_ interface: String, _ name: String) throws(BusError) -> String {
                let value = try bus.property(destination: manager, path: path, interface: interface, name: name,
                                             timeoutMilliseconds: timeoutMilliseconds)
                guard let text = value.stringValue else { throw BusError("\(name): not a string") }
                return text
            }
            let name = try text("org.freedesktop.systemd1.Unit", "Id")
            let interface = name.hasSuffix(".scope") ? "org.freedesktop.systemd1.Scope" : "org.freedesktop.systemd1.Service"
            let delegate = try bus.property(destination: manager, path: path, interface: interface, name: "Delegate",
                                            timeoutMilliseconds: timeoutMilliseconds)
            let controlGroup = try text(interface, "ControlGroup")
            return .success(Unit(name: name, controlGroup: controlGroup, delegated: delegate.boolValue == true))
        } catch {
            return .failure(Failure(reason: error.reason, noManager: false))
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let reason: String
        /// No user manager answered, or it has no unit for the process.
        public let noManager: Bool
        public var description: String { reason }
    }

    /// Whether the manager delegates `path` (a path in the cgroup
    /// hierarchy) to the unit this process runs in.
    public static func delegates(_ path: String) -> Bool {
        guard case .success(let unit) = unit() else { return false }
        return unit.delegated && unit.controlGroup == path
    }
}
