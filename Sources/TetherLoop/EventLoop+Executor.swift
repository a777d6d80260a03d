import CLibUV

/// Lets actors run on the loop thread, where they may use handles directly:
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }`.
extension EventLoop: SerialExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.task(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(inEventLoop, "not on this event loop's thread")
    }
}
