#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// A plain detached thread for blocking work the loop must not do (reading
/// a terminal), without Foundation's `Thread`.
package enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    package static func start(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        var thread = pthread_t()
        let argument = Unmanaged.passRetained(Body(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, argument)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(argument).release()
            throw Errno(rawValue: rc)
        }
        pthread_detach(thread)
    }

    /// What `body` returns or throws, run on a thread of its own while the
    /// caller's task waits (its thread, a loop's, runs on). No thread to be
    /// had: `noThread`'s error.
    package static func result<T: Sendable, E: Error>(of body: @escaping @Sendable () throws(E) -> T,
                                                      noThread: (Errno) -> E) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            do throws(Errno) {
                try start {
                    do throws(E) { continuation.resume(returning: .success(try body())) } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            } catch {
                continuation.resume(returning: .failure(noThread(error)))
            }
        }
        return try result.get()
    }
}
