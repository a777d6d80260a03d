import CLibUV
import SystemPackage

/// A one-shot or repeating timer (`uv_timer_t`), in milliseconds.
package final class LoopTimer: LoopHandle, @unchecked Sendable {
    private var callback: (() -> Void)?

    package override init(loop: EventLoop) {
        super.init(loop: loop)
        // uv_timer_init cannot fail: it only links the handle into the loop.
        uv_timer_init(loop.uv, raw(uv_timer_t.self))
        adopt()
    }

    /// Fires `callback` after `milliseconds`, then every `repeatMilliseconds`
    /// if that is non-zero. Restarting replaces the previous schedule.
    package func start(
        afterMilliseconds milliseconds: UInt64,
        repeatMilliseconds: UInt64 = 0,
        _ callback: @escaping () -> Void
    ) {
        loop.assertInLoop()
        precondition(!isClosed, "timer is closed")
        self.callback = callback
        uv_timer_start(raw(uv_timer_t.self), { timer in
            (LoopHandle.object(UnsafeMutableRawPointer(timer)) as? LoopTimer)?.callback?()
        }, milliseconds, repeatMilliseconds)
    }

    package func stop() {
        loop.assertInLoop()
        guard !isClosed else { return }
        uv_timer_stop(raw(uv_timer_t.self))
    }

    package var isActive: Bool { !isClosed && uv_is_active(handle) != 0 }

    override func willClose() { callback = nil }
}
