import CLibUV

/// Lets actors run on the loop thread, where they may use handles directly:
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }`.
/// As a task executor (`withTaskExecutorPreference(loop)`), it runs a
/// task's nonisolated async code on the loop thread too, off Swift's
/// shared pool: a command that only waits on the loop needs no other thread.
extension EventLoop: SerialExecutor, TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.task(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(inEventLoop, "not on this event loop's thread")
    }
}
