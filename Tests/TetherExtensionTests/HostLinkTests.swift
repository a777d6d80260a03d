import Dispatch
import Glibc
import Testing
import TetherGroup
import TetherIPC
import TetherLoop
import TetherTestSupport
@testable import TetherExtension

/// The link itself on a loop, against a stand-in host in this process (its
/// lock held, its socket served): what the state machine cannot show.
@Suite(.timed) struct HostLinkTests {
    /// What the loop's side keeps, read once `done` is signalled.
    final class Stage: @unchecked Sendable {
        var server: RPCServer?
        var link: HostLink?
        var told: [String] = []
        var connections = 0
        let done = DispatchSemaphore(value: 0)
    }

    /// A link closed and let go while it tells its detach (as an extension
    /// that ends there does) leaves nothing that calls it later: the retry
    /// it was deciding as the detach was told is given up by the close that
    /// came meanwhile, not armed after it.
    @Test func aLinkClosedAndFreedWhileItTellsItsDetachLeavesNothingBehind() throws {
        let scratch = try TemporaryDirectory("tether-host-link")
        try #require(mkdir(scratch.group, 0o700) == 0)
        let group = try GroupDirectory(path: scratch.group)
        // The host lock stays held: a link that lost its host retries.
        let hostLock = try #require(try LivenessLock.tryAcquire(path: try group.preparedLockPath(for: .host), label: "host"))
        defer { hostLock.release() }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let stage = Stage()
        let socketPath = group.socketPath
        let hostLockPath = try group.preparedLockPath(for: .host)
        loop.execute {
            do {
                stage.server = try RPCServer(loop: loop, path: socketPath, handler: { connection, method, _, respond in
                    guard method == HostMethod.hello else { return respond(.failure(.methodNotFound(method))) }
                    stage.connections += 1
                    respond(.success(HelloAnswer(hostPID: 42, group: "", managed: false, openAccess: false,
                                                 timeBudgetMilliseconds: nil, protocolVersion: HostProtocol.current,
                                                 capabilities: [], events: []).json))
                    // Then the host goes: the link tells its detach.
                    loop.execute { connection.close() }
                })
            } catch {
                stage.told.append("no server: \(error)")
                stage.done.signal()
                return
            }
            let link = HostLink(loop: loop, socketPath: socketPath, hostLockPath: hostLockPath, hello: [:]) { event in
                switch event {
                case .attached(let pid, _, _): stage.told.append("attached \(pid)")
                case .detached(let reason):
                    stage.told.append("detached: \(reason)")
                    stage.link?.close()
                    stage.link = nil
                    // Past the first retry's delay (5 ms), with room.
                    let timer = LoopTimer(loop: loop)
                    timer.start(afterMilliseconds: 200) {
                        timer.close()
                        stage.done.signal()
                    }
                case .incompatible(let reason): stage.told.append("incompatible: \(reason)")
                case .message: break
                }
            }
            stage.link = link
            do { try link.start() } catch { stage.told.append("no start: \(error)") }
        }
        #expect(stage.done.wait(timeout: .now() + 10) == .success)
        let ended = DispatchSemaphore(value: 0)
        loop.execute {
            stage.server?.close()
            stage.server = nil
            ended.signal()
        }
        _ = ended.wait(timeout: .now() + 10)
        #expect(stage.told == ["attached 42", "detached: lost the connection to host pid 42"])
        #expect(stage.connections == 1, "the closed link connected again")
    }
}
