import Foundation
import Testing
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// The host asking the user's service manager for a delegated scope, against
/// a manager of the test's own (`ScriptedBus` as systemd): a job that fails,
/// one whose end never comes, answers of the wrong shape, and the scope
/// made. Each ends in one sentence, within its bound.
@Suite(.timed) struct ServiceManagerDelegationTests {
    static let manager = "org.freedesktop.systemd1"

    /// systemd's side: StartTransientUnit queues job 9 and ends it as
    /// `result` (nil: never); the unit's properties as `properties` says.
    static func serve(_ bus: ScriptedBus, result: String?, unitPath: String? = "/unit/tether_2escope",
                      delegate: Bool = true) {
        guard (try? bus.accept()) != nil else { return }
        bus.serve { message in
            switch message.member {
            case "StartTransientUnit":
                let job = "/org/freedesktop/systemd1/job/9"
                let answer = bus.reply(to: message, signature: "o", body: Wire.body([.objectPath(job)]))
                // Another job's end first, then this one's (if it ends).
                let other = bus.signal(path: "/org/freedesktop/systemd1", interface: "\(manager).Manager", member: "JobRemoved",
                                       sender: manager, signature: "uoss",
                                       body: Wire.body([.uint32(8), .objectPath("/org/freedesktop/systemd1/job/8"),
                                                        .string("other.scope"), .string("done")]))
                let ours = result.map {
                    bus.signal(path: "/org/freedesktop/systemd1", interface: "\(manager).Manager", member: "JobRemoved",
                               sender: manager, signature: "uoss",
                               body: Wire.body([.uint32(9), .objectPath(job), .string("tether.scope"), .string($0)]))
                } ?? []
                return answer + other + ours
            case "GetUnitByPID":
                guard let unitPath else {
                    return bus.reply(to: message, error: "org.freedesktop.systemd1.NoUnitForPID", signature: "s",
                                     body: Wire.body([.string("no unit")]))
                }
                return bus.reply(to: message, signature: "o", body: Wire.body([.objectPath(unitPath)]))
            case "Get":
                // Properties.Get(interface, name): the name is the body's second string.
                let name = Self.secondString(message.body)
                let value: Wire.Item = switch name {
                case "Id": .variant("s", .string("tether-test.scope"))
                case "Delegate": .variant("b", .boolean(delegate))
                case "ControlGroup": .variant("s", .string("/user.slice/tether-test.scope"))
                default: .variant("u", .uint32(0))  // the wrong type for any of them
                }
                return bus.reply(to: message, signature: "v", body: Wire.body([value]))
            default:
                return nil
            }
        }
    }

    /// The second of two strings in a body ("ss").
    static func secondString(_ body: [UInt8]) -> String {
        guard body.count >= 4 else { return "" }
        let first = Int(Wire.u32(body, 0))
        var at = 4 + first + 1
        while at % 4 != 0 { at += 1 }
        guard body.count >= at + 4 else { return "" }
        let length = Int(Wire.u32(body, at))
        guard body.count >= at + 4 + length else { return "" }
        return String(decoding: body[(at + 4)..<(at + 4 + length)], as: UTF8.self)
    }

    static func startScope(result: String?, unitPath: String? = "/unit/tether_2escope", delegate: Bool = true)
        async throws -> Result<ServiceManagerDelegation.Unit, ServiceManagerDelegation.Failure> {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        try DetachedThread.start { Self.serve(bus, result: result, unitPath: unitPath, delegate: delegate) }
        defer { bus.hangUp() }
        return try await offThePool { ServiceManagerDelegation.startScope(group: "/g", pid: 4242, address: bus.address) }
    }

    @Test func aScopeMadeIsReadBackWithItsDelegation() async throws {
        let unit = try await Self.startScope(result: "done").get()
        #expect(unit == ServiceManagerDelegation.Unit(name: "tether-test.scope", controlGroup: "/user.slice/tether-test.scope",
                                                      delegated: true))
    }

    /// The job's own end is what counts: another job's "done" before it
    /// does not make a failed job a scope.
    @Test func aFailedJobIsNoScope() async throws {
        let outcome = try await Self.startScope(result: "failed")
        guard case .failure(let failure) = outcome else {
            Issue.record("a scope: \(outcome)")
            return
        }
        #expect(failure.reason == "the user's service manager made no scope: its job ended \"failed\"")
        #expect(!failure.noManager)
    }

    /// A job whose end never comes: the wait ends at its bound.
    @Test(.waits) func aJobThatNeverEndsIsGivenUpInTime() async throws {
        let started = MonotonicClock.nanoseconds()
        let outcome = try await Self.startScope(result: nil)
        let waited = (MonotonicClock.nanoseconds() - started) / 1_000_000
        guard case .failure(let failure) = outcome else {
            Issue.record("a scope: \(outcome)")
            return
        }
        #expect(failure.reason.hasPrefix("the user's service manager made no scope: StartTransientUnit: no answer's signal"),
                "\(failure)")
        #expect(waited < 10_000, "waited \(waited) ms")
    }

    /// The scope made, but the manager cannot say which unit holds the
    /// process: a failure that names the manager's answer.
    @Test func aUnitTheManagerCannotNameIsAFailure() async throws {
        let outcome = try await Self.startScope(result: "done", unitPath: nil)
        guard case .failure(let failure) = outcome else {
            Issue.record("a scope: \(outcome)")
            return
        }
        #expect(failure.reason == "the user's service manager: no unit", "\(failure)")
    }
}
