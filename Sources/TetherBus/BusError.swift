/// Why a bus call, or the bus, failed: a D-Bus error's name where the peer
/// sent one, and one sentence.
package struct BusError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The error's D-Bus name (`org.freedesktop.DBus.Error.ServiceUnknown`),
    /// nil where the failure is ours or the connection's.
    package let name: String?
    package let reason: String

    package init(name: String? = nil, _ reason: String) {
        self.name = name
        self.reason = reason
    }

    package var description: String { reason }

    /// A negative errno from sd-bus, as a sentence.
    static func errno(_ code: Int32, _ what: String) -> BusError {
        BusError("\(what): \(String(cString: strerror(-code)))")
    }
}

#if canImport(Glibc)
import Glibc
#endif
