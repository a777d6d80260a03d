import CLibUV
import SystemPackage

/// Delivers a Unix signal as a loop callback (`uv_signal_t`), so signal
/// handling code runs on the loop thread like everything else.
package final class SignalWatcher: LoopHandle, @unchecked Sendable {
    private var callback: ((Int32) -> Void)?

    package init(loop: EventLoop, signal: Int32, _ callback: @escaping (Int32) -> Void) throws(Errno) {
        super.init(loop: loop)
        try uvCheck(uv_signal_init(loop.uv, raw(uv_signal_t.self)))
        adopt()
        self.callback = callback
        SignalMask.unblock(signal)
        let rc = uv_signal_start(raw(uv_signal_t.self), { handle, signal in
            (LoopHandle.object(UnsafeMutableRawPointer(handle)) as? SignalWatcher)?.callback?(signal)
        }, signal)
        if rc < 0 {
            close()
            throw uvErrno(rc)
        }
    }

    override func willClose() { callback = nil }
}
