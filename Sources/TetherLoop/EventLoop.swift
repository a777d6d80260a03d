import CLibUV
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A libuv event loop and the thread that runs it.
///
/// Handles are created and used on the loop's thread only (the thread that
/// calls `run()`); other threads hand work over with `execute(_:)`, which is
/// safe from anywhere. The loop is also a `SerialExecutor`, so an actor can
/// run on it and touch handles from its isolated methods.
package final class EventLoop: @unchecked Sendable {
    enum Job {
        case closure(@Sendable () -> Void)
        /// A job of an actor whose executor is this loop.
        case serial(UnownedJob)
        /// A job of a task that prefers this loop (`taskExecutor`).
        case preferring(UnownedJob)
    }

    let uv: UnsafeMutablePointer<uv_loop_t>
    /// The one buffer every stream on this loop reads into: libuv asks for
    /// it and hands it back full, one read at a time, and each read's
    /// bytes are copied out before the next (`PipeStream`). One per stream
    /// kept 64 KiB per connection and pipe: megabytes for a thousand
    /// extensions.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    /// Work handed over from other threads. `uv_async_send` coalesces
    /// wake-ups, so one wake-up drains everything queued so far.
    private let queue = Mutex<(jobs: [Job], open: Bool)>(([], true))
    /// `pthread_self()` of the running thread, 0 when not running.
    private let runningThread = Atomic<UInt>(0)
    private let finished = Atomic<Bool>(false)
    /// What `whenStopping` registered, by registration (their order);
    /// touched on the loop thread only.
    private var stopping: [Int: () -> Void] = [:]
    private var stoppingRegistrations = 0
    /// The loop as a task executor; see `LoopTaskExecutor`.
    package let taskExecutor = LoopTaskExecutor()

    package init() throws(Errno) {
        uv = .allocate(capacity: 1)
        wakeup = .allocate(capacity: 1)
        let rc = uv_loop_init(uv)
        if rc < 0 {
            uv.deallocate()
            wakeup.deallocate()
            throw uvErrno(rc)
        }
        uv_async_init(uv, wakeup) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue().drain()
        }
        // Unretained: the async handle is closed before the loop goes away.
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        taskExecutor.loop = self
    }

    deinit {
        if !finished.load(ordering: .acquiring) {
            // Never ran: close the wake-up handle so the loop can be closed.
            uv_close(UnsafeMutableRawPointer(wakeup).assumingMemoryBound(to: uv_handle_t.self), nil)
            uv_run(uv, UV_RUN_NOWAIT)
            uv_loop_close(uv)
        }
        uv.deallocate()
        wakeup.deallocate()
        readBuffer.deallocate()
    }

    /// True on the thread currently running this loop.
    package var inEventLoop: Bool {
        runningThread.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthreadID()))
    }

    /// Runs `body` on the loop thread. Safe from any thread, including the
    /// loop's own (then it runs on the next turn, never re-entrantly).
    /// Work submitted after the loop finished is dropped: false then.
    @discardableResult
    package func execute(_ body: @escaping @Sendable () -> Void) -> Bool {
        submit(.closure(body))
    }

    @discardableResult
    func submit(_ job: Job) -> Bool {
        queue.withLock { state in
            guard state.open else { return false }
            state.jobs.append(job)
            uv_async_send(wakeup)
            return true
        }
    }

    /// Runs `body` on the loop thread when `run()` is about to close the
    /// handles still open, so their owners can fail what waits on them
    /// (an HTTP request) instead of leaving it waiting forever. Call on the
    /// loop thread; one registered meanwhile (by such a body, or by a job
    /// it resumed) runs too.
    ///
    /// Returns the registration, for `forgetStopping` when its owner
    /// closes first: one made and closed again and again (a bus
    /// connection each time the session bus comes back) leaves none behind.
    @discardableResult
    package func whenStopping(_ body: @escaping () -> Void) -> Int {
        assertInLoop()
        stoppingRegistrations += 1
        stopping[stoppingRegistrations] = body
        return stoppingRegistrations
    }

    /// `registration`'s body will not run: its owner closed. Only on the
    /// loop thread, whose table it is; elsewhere (as after the loop has
    /// finished, when the table is empty) it does nothing.
    package func forgetStopping(_ registration: Int) {
        guard inEventLoop else { return }
        stopping[registration] = nil
    }

    private func drain() {
        let jobs = queue.withLock { state -> [Job] in
            let jobs = state.jobs
            state.jobs.removeAll(keepingCapacity: true)
            return jobs
        }
        for job in jobs {
            switch job {
            case .closure(let body): body()
            case .serial(let job): job.runSynchronously(on: asUnownedSerialExecutor())
            case .preferring(let job): job.runSynchronously(on: taskExecutor.asUnownedTaskExecutor())
            }
        }
    }

    /// Runs the loop on the calling thread until `stop()`. On the way out it
    /// closes every handle still open (their close callbacks run) and closes
    /// the loop; a loop runs once.
    package func run() {
        precondition(!finished.load(ordering: .acquiring), "an EventLoop runs once")
        runningThread.store(UInt(bitPattern: Int(bitPattern: pthreadID())), ordering: .releasing)
        uv_run(uv, UV_RUN_DEFAULT)
        // Owners fail what still waits on their handles; the tasks that
        // resumes, and every job accepted before, run now (an executor may
        // not drop a job), within a bound. What those register for the
        // stop (a connection made again, a request sent) is stopped too.
        for _ in 0..<1_000 {
            // Most loops end with none (and a sort is code a process that
            // is exiting would fault in for nothing).
            if !self.stopping.isEmpty {
                let stopping = self.stopping.sorted { $0.key < $1.key }
                self.stopping = [:]
                for (_, body) in stopping { body() }
            }
            let jobsWait = queue.withLock { !$0.jobs.isEmpty }
            if jobsWait { drain() }
            if !jobsWait, self.stopping.isEmpty { break }
        }
        // Anything left is released after the lock: a deinit may submit.
        // A task's job may run anywhere: it goes to Swift's pool.
        let dropped = queue.withLock { state in
            state.open = false
            defer { state.jobs = [] }
            return state.jobs
        }
        for case .preferring(let job) in dropped { globalConcurrentExecutor.enqueue(job) }
        _ = consume dropped
        // Close what is still open; the wake-up handle is ours, the rest are
        // LoopHandle wrappers whose close releases the loop's reference.
        uv_walk(uv, { handle, wakeup in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            if UnsafeMutableRawPointer(handle) == wakeup {
                uv_close(handle, nil)
            } else {
                LoopHandle.object(handle)?.close()
            }
        }, UnsafeMutableRawPointer(wakeup))
        uv_run(uv, UV_RUN_DEFAULT)
        uv_loop_close(uv)
        finished.store(true, ordering: .releasing)
        runningThread.store(0, ordering: .releasing)
    }

    /// Makes `run()` return after the current turn. Safe from any thread.
    package func stop() {
        execute { [self] in uv_stop(self.uv) }
    }

    /// Traps unless called on the loop thread: for loop-confined state
    /// outside this module (libcurl's handles).
    package func preconditionInLoop(_ function: StaticString = #function) {
        assertInLoop(function)
    }

    /// Traps unless called on the loop thread: handle APIs are not thread-safe.
    @inline(__always)
    func assertInLoop(_ function: StaticString = #function) {
        precondition(inEventLoop, "\(function) must be called on the event loop's thread")
    }

    /// Runs `body` on the loop and returns its result to the caller's task;
    /// `CancellationError` if the loop has finished.
    package func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            if !execute({ continuation.resume(with: Result { try body() }) }) {
                continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Milliseconds on libuv's monotonic clock, cached per loop turn.
    package var now: UInt64 { uv_now(uv) }
}

@inline(__always)
func pthreadID() -> pthread_t { pthread_self() }
