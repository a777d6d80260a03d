import Synchronization
import Testing
import TetherLoop

/// The function one thread sets and others call (the host's reaper, called
/// at every reap of a child) is called through the same stack every time:
/// a bare function read out of a `Mutex` came back in one more thunk, kept,
/// so each call went a level deeper than the last.
@Suite struct LockedActionTests {
    @Test func everyCallGoesThroughTheSameStack() {
        let action = LockedAction<Void>()
        let depths = Mutex<[Int32]>([])
        action.set {
            var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 256)
            let depth = frames.withUnsafeMutableBufferPointer { stackTrace($0.baseAddress, 256) }
            depths.withLock { $0.append(depth) }
        }
        for _ in 0..<500 { action() }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 500)
        #expect(Set(seen).count == 1, "stack depths \(seen.first ?? 0) … \(seen.last ?? 0)")
    }

    /// The store-corruption observer's and the lock seam's shape: what a
    /// call passes reaches the function, every time through one stack.
    @Test func anArgumentReachesTheFunctionThroughTheSameStack() {
        let action = LockedAction<(path: String, count: Int)>()
        let seen = Mutex<[String]>([])
        let depths = Mutex<Set<Int32>>([])
        action.set { call in
            var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 256)
            let depth = frames.withUnsafeMutableBufferPointer { stackTrace($0.baseAddress, 256) }
            depths.withLock { _ = $0.insert(depth) }
            seen.withLock { $0.append("\(call.path) \(call.count)") }
        }
        for count in 0..<300 { action((path: "/g/stores/a.json", count: count)) }
        #expect(seen.withLock { $0.count } == 300 && seen.withLock { $0.last } == "/g/stores/a.json 299")
        #expect(depths.withLock { $0.count } == 1, "\(depths.withLock { $0 })")
    }

    @Test func unsetItCallsNothing() {
        let action = LockedAction<Void>()
        let calls = Mutex(0)
        action.set { calls.withLock { $0 += 1 } }
        action()
        action.set(nil)
        action()
        #expect(calls.withLock { $0 } == 1)
    }
}

/// glibc's `backtrace(3)` (execinfo.h is not in the Glibc module).
@_silgen_name("backtrace")
private func stackTrace(_ buffer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ size: Int32) -> Int32
