import CLibUV
import SystemPackage

/// The lifetime rules every libuv handle wrapper shares.
///
/// From a successful `uv_*_init` until its close callback, the loop holds one
/// strong reference (in `handle->data`), so callbacks never reach freed
/// memory. `close()` is the only way to end a handle; the memory is freed
/// after libuv's close callback, as libuv requires. Handles still open when
/// the loop stops are closed by the loop.
package class LoopHandle: @unchecked Sendable {
    package let loop: EventLoop
    let memory: UnsafeMutablePointer<uv_any_handle>
    package private(set) var isClosed = false
    private var adopted = false
    private var closeCompletion: (() -> Void)?

    init(loop: EventLoop) {
        loop.assertInLoop()
        self.loop = loop
        memory = .allocate(capacity: 1)
        UnsafeMutableRawPointer(memory).initializeMemory(
            as: UInt8.self, repeating: 0, count: MemoryLayout<uv_any_handle>.size)
    }

    deinit { memory.deallocate() }

    var handle: UnsafeMutablePointer<uv_handle_t> { raw(uv_handle_t.self) }

    func raw<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        UnsafeMutableRawPointer(memory).assumingMemoryBound(to: T.self)
    }

    /// Called once `uv_*_init` succeeded: the loop now keeps `self` alive.
    func adopt() {
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        adopted = true
    }

    /// The wrapper behind a handle pointer passed to a libuv callback.
    static func object(_ handle: UnsafeMutableRawPointer?) -> LoopHandle? {
        guard let handle, let data = handle.assumingMemoryBound(to: uv_handle_t.self).pointee.data
        else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? LoopHandle
    }

    static func object(_ handle: UnsafeMutablePointer<uv_handle_t>?) -> LoopHandle? {
        object(UnsafeMutableRawPointer(handle))
    }

    /// Stops the handle and releases it; `completion` runs after libuv is
    /// done with it. Idempotent.
    package func close(_ completion: (() -> Void)? = nil) {
        // Already closed (possibly by the loop on its way out): nothing to do,
        // from any thread.
        guard !isClosed else { completion?(); return }
        loop.assertInLoop()
        isClosed = true
        willClose()
        guard adopted else { completion?(); return }
        closeCompletion = completion
        uv_close(handle) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            let me = Unmanaged<LoopHandle>.fromOpaque(data).takeRetainedValue()
            handle.pointee.data = nil
            let completion = me.closeCompletion
            me.closeCompletion = nil
            completion?()
        }
    }

    /// Subclasses drop their callbacks here, breaking reference cycles.
    func willClose() {}

    /// Keeps the loop running while this handle is active (the default).
    package func ref() { loop.assertInLoop(); uv_ref(handle) }
    /// Lets the loop end even while this handle is active.
    package func unref() { loop.assertInLoop(); uv_unref(handle) }
}
