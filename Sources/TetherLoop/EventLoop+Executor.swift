import CLibUV

/// Lets actors run on the loop thread, where they may use handles directly:
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }`.
/// A job for an actor on a loop that has finished cannot run anywhere else
/// (the actor's state belongs to the loop thread): it is dropped.
extension EventLoop: SerialExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        submit(.serial(UnownedJob(job)))
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    package func checkIsolated() {
        precondition(inEventLoop, "not on this event loop's thread")
    }
}

/// The loop as a task executor (`withTaskExecutorPreference(loop.taskExecutor)`):
/// a task's nonisolated async code runs on the loop thread too, off Swift's
/// shared pool, so a command or an extension that only waits on the loop
/// needs no other thread. Nonisolated code may run anywhere, so a job that
/// comes after the loop has finished goes to Swift's shared pool instead:
/// a task that prefers a finished loop still ends.
package final class LoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    /// Weak: the loop owns its task executor, and a task may keep the
    /// executor longer than anyone keeps the loop. Set once, by the loop's
    /// init, before either is shared (hence unchecked).
    weak var loop: EventLoop?

    init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if loop?.submit(.preferring(job)) != true {
            globalConcurrentExecutor.enqueue(job)
        }
    }

    package func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
