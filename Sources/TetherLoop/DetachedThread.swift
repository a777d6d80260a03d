#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// A plain detached thread for blocking work the loop must not do (reading
/// a terminal), without Foundation's `Thread`.
public enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    public static func start(_ body: @escaping @Sendable () -> Void) throws(Errno) {
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
}
