import CTetherBus
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
    static let timeoutMilliseconds: Int32 = 2_000

    /// The unit the user's manager runs `pid` in; nil with why where there
    /// is no such manager, or it has no unit for `pid`.
    public static func unit(of pid: Int32 = getpid()) -> Result<Unit, Failure> {
        // The bus a desktop session leaves, never an autolaunched one.
        let address: String
        switch SessionBusAddress.resolve() {
        case .success(let found): address = found
        case .failure(let noBus): return .failure(Failure(reason: "no session bus: \(noBus.reason)", noManager: true))
        }
        var name = [CChar](repeating: 0, count: 256)
        var controlGroup = [CChar](repeating: 0, count: 1_024)
        var error = [CChar](repeating: 0, count: 512)
        var delegated: Int32 = 0
        let found = tether_bus_unit_of_pid(address, UInt32(bitPattern: pid), timeoutMilliseconds, &name, name.count,
                                           &controlGroup, controlGroup.count, &delegated, &error, error.count)
        guard found == 1 else { return .failure(Failure(reason: string(error), noManager: found == 0)) }
        return .success(Unit(name: string(name), controlGroup: string(controlGroup), delegated: delegated != 0))
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

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
