import Dispatch
import Glibc
import Testing
import TetherIPC
import TetherLoop
import TetherManifest
import TetherTestSupport
@testable import TetherHost

/// One push through its routes, in-process: the extension is the far end
/// of a socket pair, read and answered (or not) by the test, the delivery
/// on a loop thread of its own.
@Suite(.timed) struct PushDeliveryTests {
    /// What the loop's side keeps and tells, read by the test once `done` is signalled.
    final class Trace: @unchecked Sendable {
        var connection: RPCConnection?
        var delivery: PushDelivery?
        var answer: Result<PushAnswer, RPCError>?
        var reports: [String] = []
        var settled = 0
        var pendingAfter: Int?
        let done = DispatchSemaphore(value: 0)
    }

    let payload: [String: JSONValue] = [DesktopNotification.Field.title: "Order shipped"]

    /// A delivery through one route to the extension at `peer`'s far end
    /// (nil: a route that cannot take it), its budget `budget`; `unanswered`
    /// calls are made on its connection first and never answered.
    func deliver(on thread: EventLoopThread, _ trace: Trace, to descriptor: Int32?, budget: UInt64?,
                 unanswered: Int = 0) {
        let loop = thread.loop
        let payload = self.payload
        loop.execute {
            var target: AttachedExtension?
            if let descriptor, let stream = try? PipeStream.adopting(loop: loop, fileDescriptor: descriptor) {
                let connection = RPCConnection(stream: stream, goodbye: HostNotification.disconnecting)
                connection.start(handler: { _, _, _, _ in })
                trace.connection = connection
                for _ in 0..<unanswered { connection.call(ExtensionMethod.receivePush, nil) { _ in } }
                target = AttachedExtension(name: "notes", role: .notification, pid: 1, managed: true, openAccess: false,
                                           timeBudgetMilliseconds: nil, protocolVersion: HostProtocol.current,
                                           connection: connection)
            }
            let route = PushDelivery.Route(name: "notes", ready: { handOver in
                handOver(target)
                return {}
            }, settled: { trace.settled += 1 })
            trace.delivery = PushDelivery.start(loop: loop, payload: payload, budgetMilliseconds: budget, routes: [route],
                                                report: { name, outcome, _, modified in
                trace.reports.append("\(name) \(outcome.rawValue)\(modified ? " modified" : "")")
            }, respond: { answer in
                trace.answer = answer
                trace.pendingAfter = trace.connection?.pendingCalls
                trace.delivery = nil
                trace.done.signal()
            })
        }
    }

    func pair() throws -> (mine: Int32, peer: RawClient) {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        return (ends[0], RawClient(descriptor: ends[1]))
    }

    /// The request the extension read: its id and what it was given.
    func received(_ peer: RawClient) throws -> (id: JSONValue, push: PushReceive?) {
        let line = try #require(peer.readLine())
        guard case .request(let id, let method, let params) = try RPCMessage.parse(Array(line.utf8)) else {
            Issue.record("not a request: \(line)")
            return (.null, nil)
        }
        #expect(method == ExtensionMethod.receivePush)
        return (id, try? PushReceive(receivedParams: params))
    }

    /// Waits (bounded) for the push's answer.
    func awaitAnswer(_ trace: Trace) {
        #expect(trace.done.wait(timeout: .now() + 10) == .success)
    }

    /// One delivery under way on a loop thread of its own, to the extension
    /// at `peer` (nil: a route that cannot take it).
    struct Run {
        let thread: EventLoopThread
        let trace = Trace()
        let peer: RawClient?
    }

    func start(budget: UInt64?, attached: Bool = true, unanswered: Int = 0) throws -> Run {
        let ends = attached ? try pair() : nil
        let run = Run(thread: try EventLoopThread(), peer: ends?.peer)
        deliver(on: run.thread, run.trace, to: ends?.mine, budget: budget, unanswered: unanswered)
        return run
    }

    /// The extension's end closed, the test's connection closed on its
    /// loop, and the loop ended: deferred, so a failed expectation leaves
    /// none of them behind.
    func end(_ run: Run) {
        run.peer?.close()
        let left = DispatchSemaphore(value: 0)
        let trace = run.trace
        run.thread.loop.execute {
            trace.connection?.close()
            trace.connection = nil
            left.signal()
        }
        _ = left.wait(timeout: .now() + 10)
        run.thread.shutdown()
    }

    @Test func withoutRoutesTheOriginalIsDeliveredAtOnce() throws {
        let run = Run(thread: try EventLoopThread(), peer: nil)
        defer { end(run) }
        let (thread, trace) = (run.thread, run.trace)
        let payload = self.payload
        thread.loop.execute {
            let none = PushDelivery.start(loop: thread.loop, payload: payload, budgetMilliseconds: nil, routes: [],
                                          report: { _, _, _, _ in }, respond: { answer in
                trace.answer = answer
                trace.done.signal()
            })
            #expect(none == nil)
        }
        awaitAnswer(trace)
        let delivered = try #require(try trace.answer?.get().delivered)
        #expect(delivered.map(\.content) == [payload])
        #expect(delivered.first?.modified == false)
    }

    @Test func anAnswerIsDeliveredAsRewrittenWithTheBudgetLeft() throws {
        let run = try start(budget: 20_000)
        defer { end(run) }
        let (trace, peer) = (run.trace, try #require(run.peer))
        let (id, push) = try received(peer)
        #expect(push?.payload == payload)
        #expect((push?.budgetMilliseconds ?? 0) > 10_000 && (push?.budgetMilliseconds ?? 0) <= 20_000)
        let rewritten: [String: JSONValue] = [DesktopNotification.Field.title: "Order shipped: 2 items"]
        peer.send(RPCMessage.response(id: id, result: .success(DeliveredPush(content: rewritten, modified: true,
                                                                               timedOut: false).json)).encoded())
        awaitAnswer(trace)
        let delivered = try #require(try trace.answer?.get().delivered)
        #expect(delivered.map(\.content) == [rewritten])
        #expect(delivered.first?.extensionName == "notes")
        #expect(trace.reports == ["notes answered modified"])
        #expect(trace.settled == 1)
    }

    /// Unanswered past its budget (and the second of slack): the original,
    /// and the call is given up, so nothing of the push stays held.
    @Test func pastItsBudgetTheOriginalIsDeliveredAndTheCallGivenUp() throws {
        let run = try start(budget: 1)
        defer { end(run) }
        let trace = run.trace
        _ = try received(try #require(run.peer))
        awaitAnswer(trace)
        let delivered = try #require(try trace.answer?.get().delivered)
        #expect(delivered.map(\.content) == [payload])
        #expect(delivered.first?.timedOut == true)
        #expect(trace.reports == ["notes timedOut"])
        #expect(trace.pendingAfter == 0)
        #expect(trace.settled == 1)
    }

    @Test func anExtensionThatCannotTakeItOrHasTooManyUnansweredGetsTheOriginal() throws {
        let gone = try start(budget: nil, attached: false)
        defer { end(gone) }
        let trace = gone.trace
        awaitAnswer(trace)
        #expect(try trace.answer?.get().delivered.map(\.content) == [payload])
        #expect(trace.reports == ["notes failed"])

        let busy = try start(budget: nil, unanswered: PushDelivery.maximumUnansweredPerExtension)
        defer { end(busy) }
        let (crowded, peer) = (busy.trace, try #require(busy.peer))
        awaitAnswer(crowded)
        #expect(try crowded.answer?.get().delivered.map(\.content) == [payload])
        #expect(crowded.reports == ["notes busy"])
        // Only the calls made before it were sent: the push was not.
        #expect(peer.countLines(PushDelivery.maximumUnansweredPerExtension + 1, timeout: 200)
                == PushDelivery.maximumUnansweredPerExtension)
    }

    /// Ended early (its sender went, or room was made): answered with why,
    /// each route settled once, its call given up.
    @Test func anEndedPushIsAnsweredWithWhyAndLeavesNothingHeld() throws {
        let run = try start(budget: 20_000)
        defer { end(run) }
        let (thread, trace) = (run.thread, run.trace)
        _ = try received(try #require(run.peer))
        thread.loop.execute { trace.delivery?.end(.refused("push ended: its sender went")) }
        awaitAnswer(trace)
        #expect(trace.answer == .failure(.refused("push ended: its sender went")))
        #expect(trace.settled == 1)
        #expect(trace.reports == ["notes failed"])
        #expect(trace.pendingAfter == 0)
    }
}
