import Foundation
import Synchronization
import Testing
@testable import TetherAuth
import TetherLoop
import TetherTestSupport

/// The keyring's client against a Secret Service of the test's own
/// (`ScriptedBus`, in this process) that misbehaves: it echoes what it was
/// given in its error, answers in shapes no service should, is locked, or
/// never answers. Each ends in one sentence, never a secret, in bounded time.
@Suite(.timed) struct SecretServiceTests {
    /// The client (TetherTestSupport's `SecretService` is a keyring of the tests').
    typealias Client = TetherAuth.SecretService

    static let secret = "refresh-SECRET-4f9a"

    /// A service answering `answer` (nil: silence) after the session and the
    /// default collection, which is locked if `locked`; what the client did,
    /// by member, and what came of `body`.
    static func withService(locked: Bool = false, timeoutMilliseconds: UInt64 = 5_000,
                            _ answer: @escaping @Sendable (ScriptedBus, ScriptedBus.Message) -> [UInt8]?,
                            _ body: (Client) throws(KeyringError) -> String) async throws -> (members: [String], outcome: String) {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let members = Mutex<[String]>([])
        let served = DispatchSemaphore(value: 0)
        try DetachedThread.start {
            defer { served.signal() }
            guard (try? bus.accept()) != nil else { return }
            let called = bus.serve { message in
                switch message.member {
                case "OpenSession":
                    return bus.reply(to: message, signature: "vo", body: Wire.body([.variant("s", .string("")), .objectPath("/s/1")]))
                case "ReadAlias":
                    return bus.reply(to: message, signature: "o", body: Wire.body([.objectPath("/c/login")]))
                case "Get" where message.path == "/c/login":
                    return bus.reply(to: message, signature: "v", body: Wire.body([.variant("b", .boolean(locked))]))
                case "Close":
                    return bus.reply(to: message)
                default:
                    return answer(bus, message)
                }
            }
            members.withLock { $0 = called }
        }
        let outcome: String
        do throws(KeyringError) {
            let service = try Client(address: bus.address, timeoutMilliseconds: timeoutMilliseconds)
            do throws(KeyringError) {
                outcome = try body(service)
            } catch {
                outcome = "\(error)"
            }
            service.close()
        } catch {
            outcome = "\(error)"
        }
        bus.hangUp()
        _ = served.wait(timeout: .now() + 10)
        return (members.withLock { $0 }, outcome)
    }

    /// A service that quotes the secret in its refusal, under a name of its
    /// own or one the client knows: the error names the refusal, and holds
    /// no part of what was sent.
    @Test(arguments: [("org.example.Keyring.Refused", "the keyring refused: org.example.Keyring.Refused"),
                      ("org.freedesktop.DBus.Error.ServiceUnknown", "no Secret Service answers on the session bus")])
    func anErrorThatEchoesTheSecretIsNotQuoted(_ name: String, _ expected: String) async throws {
        let (_, outcome) = try await Self.withService({ bus, message in
            guard message.member == "CreateItem" else { return nil }
            return bus.reply(to: message, error: name, signature: "s", body: Wire.body([.string("cannot store \(Self.secret) now")]))
        }) { service throws(KeyringError) in
            try service.store(Self.secret, label: "Tether", attributes: ["group": "g"])
            return "stored"
        }
        #expect(outcome == expected)
        #expect(!outcome.contains("SECRET"))
    }

    /// A locked collection is refused before anything is asked of it: no
    /// prompt shows, and the secret never travels.
    @Test func aLockedCollectionIsRefusedBeforeTheSecretIsSent() async throws {
        let (members, outcome) = try await Self.withService(locked: true, { _, _ in nil }) { service throws(KeyringError) in
            try service.store(Self.secret, label: "Tether", attributes: ["group": "g"])
            return "stored"
        }
        #expect(outcome == "it is locked")
        #expect(!members.contains("CreateItem"), "\(members)")
    }

    /// Answers of shapes no service sends: nothing is taken for a secret.
    @Test(arguments: ["a{o(oayays)}", "a{ov}", "s", ""])
    func aSecretOfTheWrongShapeIsNone(_ signature: String) async throws {
        let (_, outcome) = try await Self.withService({ bus, message in
            guard message.member == "GetSecrets" else { return nil }
            let body: [UInt8] = switch signature {
            case "a{o(oayays)}": Wire.body([.emptyArray(alignment: 8)])  // no entry
            case "a{ov}": Wire.body([.entries([(.objectPath("/c/login/1"), .variant("s", .string(Self.secret)))])])
            case "s": Wire.body([.string(Self.secret)])
            default: []
            }
            return bus.reply(to: message, signature: signature, body: body)
        }) { service throws(KeyringError) in
            try service.secret(of: "/c/login/1")
        }
        #expect(outcome == "the keyring gave no secret for the item", "\(outcome)")
    }

    /// A service that never answers: the call ends at its bound.
    @Test func aServiceThatNeverAnswersEndsInTime() async throws {
        let started = MonotonicClock.nanoseconds()
        let (_, outcome) = try await Self.withService(timeoutMilliseconds: 1_500, { _, _ in nil }) { service throws(KeyringError) in
            try service.search(["group": "g"]).joined()
        }
        let waited = (MonotonicClock.nanoseconds() - started) / 1_000_000
        #expect(outcome == "the keyring did not answer in time")
        #expect(waited < 5_000, "waited \(waited) ms")
    }

    /// A search that finds the item in a locked collection: "it is locked",
    /// not "no secret" (a login would otherwise start over, and ask again).
    @Test func aLockedItemFoundIsSaidToBeLocked() async throws {
        let (_, outcome) = try await Self.withService({ bus, message in
            guard message.member == "SearchItems" else { return nil }
            return bus.reply(to: message, signature: "aoao",
                             body: Wire.body([.strings([]), .strings(["/c/login/1"])]))
        }) { service throws(KeyringError) in
            try service.search(["group": "g"]).joined(separator: ",")
        }
        #expect(outcome == "it is locked")
    }

    /// A removal the service would only do after a prompt: refused, said so,
    /// and no prompt is asked for.
    @Test func aRemovalThatNeedsAPromptIsRefused() async throws {
        let (members, outcome) = try await Self.withService({ bus, message in
            guard message.member == "Delete" else { return nil }
            return bus.reply(to: message, signature: "o", body: Wire.body([.objectPath("/prompt/1")]))
        }) { service throws(KeyringError) in
            try service.delete("/c/login/1")
            return "removed"
        }
        #expect(outcome == "the keyring did not remove the secret (it asked for a prompt)")
        #expect(!members.contains("Prompt"), "\(members)")
    }
}
