import SystemPackage
import TetherHTTP

/// Runs async work from a synchronous command and waits for its result:
/// `HTTPClient.withLoop`, the main thread running the loop its HTTP
/// requests are driven on.
func runAsync<T: Sendable>(_ body: @escaping @Sendable (HTTPClient) async throws -> T) throws -> T {
    do {
        return try HTTPClient.withLoop(body)
    } catch let error as Errno {
        throw CLIError.environment("cannot start the event loop: \(error)")
    }
}
