#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process can start with signals blocked: a parent spawning from a thread
/// that blocks them (Dispatch and Swift concurrency workers do) passes its
/// mask on. A loop that waits for a signal must unblock it on its own thread,
/// or it waits forever.
enum SignalMask {
    static func unblock(_ signal: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
