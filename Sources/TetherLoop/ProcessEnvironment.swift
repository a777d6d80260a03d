#if canImport(Glibc)
import Glibc
#endif

/// The process's environment variables, read one at a time with getenv(3).
///
/// Start-up paths (`tether probe`, an extension's first hello) read two or
/// three variables; building the whole environment as a dictionary
/// (`ProcessInfo.environment`) costs Foundation's initialisation and the
/// runtime's first scan of protocol conformances (for `String: Hashable`),
/// which is a good part of a short command's time and memory.
public enum ProcessEnvironment {
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
