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
package enum ProcessEnvironment {
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Every `KEY=VALUE` entry, with `name` set to `value`: the environment
    /// for a child that gets a changed copy of ours.
    package static func entries(setting name: String, to value: String) -> [String] {
        var entries: [String] = []
        var cursor: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        while let current = cursor, let entry = current.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix(name + "=") { entries.append(text) }
            cursor = current.advanced(by: 1)
        }
        return entries + ["\(name)=\(value)"]
    }
}
