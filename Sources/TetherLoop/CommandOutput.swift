import Synchronization
import SystemPackage

/// A command run to its end on an event loop of its own, with what it
/// printed: for a tool that calls another (the scaffolder runs `swift
/// package`). Spawned as every child is (`ChildProcess`); the caller's
/// thread runs the loop until the command has exited and both pipes ended.
package struct CommandOutput: Sendable {
    package let status: TerminationStatus
    package let standardOutput: [UInt8]
    package let standardError: [UInt8]

    /// Runs `executable` (looked up in `PATH` without a slash) with
    /// `arguments`, standard input from /dev/null, in `environment` (`KEY=VALUE`
    /// entries; nil: ours). Throws if it cannot start.
    package static func run(_ executable: String, _ arguments: [String], workingDirectory: String? = nil,
                            environment: [String]? = nil) throws(Errno) -> CommandOutput {
        StandardDescriptors.ensureOpen()
        let outcome = try EventLoop.runUntilDone { (loop, done: LoopCompletion<Result<CommandOutput, Errno>>) in
            let collected = Collected()
            func finishIfDone() {
                let output = collected.state.withLock { state in
                    state.status.flatMap { state.ends == 2
                        ? CommandOutput(status: $0, standardOutput: state.out, standardError: state.err) : nil }
                }
                if let output { done.finish(.success(output)) }
            }
            do throws(Errno) {
                let options = ProcessOptions(executable: executable, arguments: arguments,
                                             environment: environment, workingDirectory: workingDirectory,
                                             stdin: .ignore, stdout: .pipe, stderr: .pipe)
                let child = try ChildProcess.spawn(loop: loop, options) { status in
                    collected.state.withLock { $0.status = status }
                    finishIfDone()
                }
                for (stream, isError) in [(child.stdout, false), (child.stderr, true)] {
                    try stream?.startReading { event in
                        switch event {
                        case .data(let bytes):
                            collected.state.withLock { isError ? $0.err.append(contentsOf: bytes) : $0.out.append(contentsOf: bytes) }
                        case .end, .failed:
                            stream?.close()
                            collected.state.withLock { $0.ends += 1 }
                            finishIfDone()
                        }
                    }
                }
            } catch {
                done.finish(.failure(error))
            }
        }
        // The loop stops only with a result; nil would be a loop gone early.
        return try (outcome ?? .failure(Errno.interrupted)).get()
    }

    package var errorText: String { String(decoding: standardError, as: UTF8.self) }
}

/// What the loop gathers for `CommandOutput.run`.
private final class Collected: Sendable {
    let state = Mutex<(status: TerminationStatus?, out: [UInt8], err: [UInt8], ends: Int)>((nil, [], [], 0))
}
