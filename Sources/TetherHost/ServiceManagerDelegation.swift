import TetherBus
import TetherGroup
import TetherSandbox
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
package enum ServiceManagerDelegation {
    package struct Unit: Sendable, Equatable {
        package let name: String
        package let controlGroup: String
        package let delegated: Bool
    }

    /// How long each of its three calls may take.
    static let timeoutMilliseconds: UInt64 = 2_000

    /// The unit the user's manager runs `pid` in; nil with why where there
    /// is no such manager, or it has no unit for `pid`.
    package static func unit(of pid: Int32 = getpid(), address: String? = nil) -> Result<Unit, Failure> {
        switch connect(address) {
        case .success(let bus): unit(of: pid, on: bus)
        case .failure(let failure): .failure(failure)
        }
    }

    private static func unit(of pid: Int32, on bus: BlockingBus) -> Result<Unit, Failure> {
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

    /// Asks the user's manager for a scope of its own with `Delegate=yes`
    /// and this process in it, as `systemd-run --user --scope -p
    /// Delegate=yes` does, and waits for the job (bounded). The manager
    /// moves the process (or has PID 1 move it, from a login session's
    /// cgroup); the scope ends when its last process does. Named after
    /// the group and the pid: a killed host's scope may still hold what
    /// it left.
    package static func startScope(group: String, pid: Int32 = getpid(), address: String? = nil) -> Result<Unit, Failure> {
        let bus: BlockingBus
        switch connect(address) {
        case .success(let connected): bus = connected
        case .failure(let failure): return .failure(failure)
        }
        let manager = "org.freedesktop.systemd1"
        let name = "tether-\(PathHash.hex(group))-\(pid).scope"
        let properties: [BusValue] = [
            .structure([.string("Description"), .variant(.string("Tether host of \(group)"))]),
            .structure([.string("PIDs"), .variant(.array(element: "u", [.uint32(UInt32(bitPattern: pid))]))]),
            .structure([.string("Delegate"), .variant(.boolean(true))]),
            // A scope that failed is not kept for `systemctl reset-failed`.
            .structure([.string("CollectMode"), .variant(.string("inactive-or-failed"))]),
        ]
        let rule = "type='signal',sender='\(manager)',path='/org/freedesktop/systemd1',"
            + "interface='org.freedesktop.systemd1.Manager',member='JobRemoved'"
        let result: String
        do {
            let (_, removed) = try bus.call(
                destination: manager, path: "/org/freedesktop/systemd1", interface: "org.freedesktop.systemd1.Manager",
                member: "StartTransientUnit",
                [.string(name), .string("fail"), .array(element: "(sv)", properties), .array(element: "(sa(sv))", [])],
                // JobRemoved(id, job, unit, result) for the job the call queued.
                thenAwait: rule, until: { answer, signal in
                    signal.arguments.count == 4 && signal.arguments[1].stringValue == answer.first?.stringValue
                }, timeoutMilliseconds: timeoutMilliseconds)
            result = removed.arguments[3].stringValue ?? ""
        } catch {
            return .failure(Failure(reason: "the user's service manager made no scope: \(error.reason)", noManager: error.name == nil))
        }
        guard result == "done" else {
            return .failure(Failure(reason: "the user's service manager made no scope: its job ended \"\(result)\"", noManager: false))
        }
        return unit(of: pid, on: bus)
    }

    /// The controllers a scope of the user's manager would get (those of
    /// the manager's own cgroup); nil where no manager answers.
    package static func scopeControllers() -> Set<String>? {
        guard case .success(let bus) = connect(),
              let value = try? bus.property(destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
                                            interface: "org.freedesktop.systemd1.Manager", name: "ControlGroup",
                                            timeoutMilliseconds: timeoutMilliseconds),
              let path = value.stringValue else { return nil }
        return DelegatedCgroup.controllers(at: path)
    }

    /// The session bus a desktop session leaves, never an autolaunched one.
    /// The bus at `address`, or the session's.
    private static func connect(_ given: String? = nil) -> Result<BlockingBus, Failure> {
        var address = given ?? ""
        if given == nil {
            switch SessionBusAddress.resolve() {
            case .success(let found): address = found
            case .failure(let noBus): return .failure(Failure(reason: "no session bus: \(noBus.reason)", noManager: true))
            }
        }
        do {
            return .success(try BlockingBus(address: address, timeoutMilliseconds: timeoutMilliseconds))
        } catch {
            return .failure(Failure(reason: "no session bus: \(error.reason)", noManager: true))
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let reason: String
        /// No user manager answered, or it has no unit for the process.
        package let noManager: Bool
        package var description: String { reason }
    }

    /// Whether the manager delegates `path` (a path in the cgroup
    /// hierarchy) to the unit this process runs in.
    package static func delegates(_ path: String) -> Bool {
        guard case .success(let unit) = unit() else { return false }
        return unit.delegated && unit.controlGroup == path
    }
}
