import Foundation
import Testing
import TetherRPC
import TetherLoop
import TetherTestSupport

/// An echo server on its own loop thread, for one test. Loop closures
/// capture only `Box`, so the fixture is always released on the test's thread.
final class EchoServer: @unchecked Sendable {
    let thread: EventLoopThread
    let dir: TemporaryDirectory
    let path: String
    private let box = Box()

    final class Box: @unchecked Sendable {
        var server: RPCServer?
        /// "hang" requests received, never answered.
        var hung = 0
        /// Loop turns counted while "counted" requests run (a job each
        /// turn, queued by the turn's first such request), and how many
        /// ran in each turn.
        var turn = 0
        var ticking = false
        var countedByTurn: [Int: Int] = [:]
        /// The timers of "later" requests, open until the loop ends.
        var later: [LoopTimer] = []
        /// The connection of the last "twice" request.
        var connection: RPCConnection?
    }

    /// Methods: echo, uid, hang (never answered), big (a string of
    /// `params` bytes), counted (an echo counted by loop turn), later (an
    /// echo answered after the first of `params` milliseconds), twice (an
    /// echo its handler answers twice).
    init(limits: RPCServer.Limits = .init(), goodbye: String? = nil) throws {
        // As the host does: a peer gone mid-answer is an error, not a signal.
        signal(SIGPIPE, SIG_IGN)
        thread = try EventLoopThread()
        dir = try TemporaryDirectory("tether-ipc")
        path = dir.path + "/s.sock"
        let loop = thread.loop
        let (path, box) = (self.path, self.box)
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        loop.execute {
            do {
                box.server = try RPCServer(loop: loop, path: path, limits: limits, goodbye: goodbye) { connection, method, params, respond in
                    switch method {
                    case "echo": respond(.success(params ?? .null))
                    case "twice":
                        box.connection = connection
                        respond(.success(params ?? .null))
                        respond(.success(params ?? .null))
                    case "uid": respond(.success(.integer(geteuid())))
                    case "hang": box.hung += 1
                    case "counted":
                        box.countedByTurn[box.turn, default: 0] += 1
                        if !box.ticking {
                            // Jobs queued while jobs run wait for the next turn.
                            box.ticking = true
                            loop.execute {
                                box.turn += 1
                                box.ticking = false
                            }
                        }
                        respond(.success(params ?? .null))
                    case "later":
                        let timer = LoopTimer(loop: loop)
                        box.later.append(timer)
                        let milliseconds = UInt64(clamping: params?.arrayValue?.first?.intValue ?? 0)
                        timer.start(afterMilliseconds: milliseconds) { respond(.success(params ?? .null)) }
                    case "big": respond(.success(.string(String(repeating: "x", count: params?.arrayValue?.first?.intValue ?? 0))))
                    default: respond(.failure(.methodNotFound(method)))
                    }
                }
            } catch {
                failure = error
            }
            ready.signal()
        }
        ready.wait()
        if let failure { throw failure }
    }

    var refusedPeers: Int {
        get throws { try onLoop { $0.server?.refusedPeers ?? -1 } }
    }

    var hung: Int {
        get throws { try onLoop { $0.hung } }
    }

    /// `body` on the server's loop, waited for.
    func onLoop<T>(_ body: @escaping (Box) -> T) throws -> T {
        let box = self.box
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var value: T?
        nonisolated(unsafe) let body = body
        thread.loop.execute { value = body(box); done.signal() }
        guard done.wait(timeout: .now() + 10) == .success, let value else { throw TestTimeout(what: "the server loop") }
        return value
    }

    /// Whether `condition` holds on the server's loop within `seconds`,
    /// asked again each time the loop has run what was queued meanwhile.
    func eventually(within seconds: Double = 10, _ condition: @escaping (Box) -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try onLoop(condition) { return true }
            usleep(5_000)
        }
        return false
    }

    deinit { thread.shutdown() }
}
