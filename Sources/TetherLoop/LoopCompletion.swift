import Synchronization
import SystemPackage

/// The outcome of work on a loop of the caller's own: the first result
/// reported stands and stops the loop, so a timer or signal racing an error
/// cannot overwrite it while the loop winds down. With
/// `EventLoop.run(until:)`, the one way a blocking call (a command, a tool
/// run, a one-shot request) drives libuv on its own thread.
package final class LoopCompletion<Value: Sendable>: Sendable {
    private let loop: EventLoop
    private let value = Mutex<Value?>(nil)

    package init(loop: EventLoop) {
        self.loop = loop
    }

    /// Reports `result` and stops the loop; false, changing nothing, when a
    /// result was reported already.
    @discardableResult
    package func finish(_ result: Value) -> Bool {
        let first = value.withLock { value in
            guard value == nil else { return false }
            value = result
            return true
        }
        if first { loop.stop() }
        return first
    }

    package var isFinished: Bool { value.withLock { $0 != nil } }

    /// The result reported, if any.
    package var result: Value? { value.withLock { $0 } }
}

extension EventLoop {
    /// Runs `start` on this loop, then the loop on the calling thread until
    /// `completion` has a result; nil when the loop stopped without one.
    package func run<Value>(until completion: LoopCompletion<Value>, _ start: @escaping @Sendable () -> Void) -> Value? {
        execute(start)
        run()
        return completion.result
    }

    /// A loop of its own for one piece of work, run on the calling thread
    /// until `start`'s work reports a result to the completion it is given.
    package static func runUntilDone<Value: Sendable>(
        _ start: @escaping @Sendable (EventLoop, LoopCompletion<Value>) -> Void
    ) throws(Errno) -> Value? {
        let loop = try EventLoop()
        let completion = LoopCompletion<Value>(loop: loop)
        return loop.run(until: completion) { start(loop, completion) }
    }
}
