import TetherLog
import TetherLoop

/// A command that runs on an event loop (on the main thread) until it has
/// an outcome: an exit status, or an error to report.
class LoopSession: @unchecked Sendable {
    let loop: EventLoop
    private let completion: LoopCompletion<Result<Int32, CLIError>>

    init() throws {
        do { loop = try EventLoop() } catch { throw CLIError.environment("cannot start the event loop: \(error)") }
        completion = LoopCompletion(loop: loop)
    }

    /// Runs `start()` on the loop and returns the first outcome reported.
    func run() -> Result<Int32, CLIError> {
        let outcome = loop.run(until: completion) { self.start() }
        // What the loop had not written yet, boundedly: a stalled reader
        // cannot hold the exit.
        LogOutput.standardOutput.finish()
        LogOutput.standardError.finish()
        return outcome ?? .failure(.environment("the event loop stopped early"))
    }

    /// Subclasses set up their handles here, on the loop.
    func start() {}

    /// Subclasses release what they hold here, once, before the loop stops.
    func willFinish() {}

    /// The first outcome stands (`LoopCompletion`); the loop stops after it.
    func finish(_ result: Result<Int32, CLIError>) {
        if completion.finish(result) { willFinish() }
    }

    /// Output for a command that prints a stream of lines: written without
    /// blocking the loop, and when the reader goes away (`watch | head -1`)
    /// the command ends quietly with 0, as Unix tools do.
    func streamOutput() {
        LogOutput.standardOutput.attach(to: loop, onClosed: { [unowned self] in
            self.loop.execute { self.finish(.success(0)) }
        })
        LogOutput.standardError.attach(to: loop, sharing: .standardOutput)
    }

    /// Routes `signals` to `handler` on the loop; false (and finished with an
    /// error) if one cannot be handled.
    func handleSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) -> Bool {
        for signal in signals {
            do {
                _ = try SignalWatcher(loop: loop, signal: signal, handler)
            } catch {
                finish(.failure(.environment("cannot handle signal \(signal): \(error)")))
                return false
            }
        }
        return true
    }
}
