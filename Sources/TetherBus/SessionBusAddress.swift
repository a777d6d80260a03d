import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// The user's session bus, found as a desktop session leaves it: the
/// address in `DBUS_SESSION_BUS_ADDRESS`, else the socket at
/// `$XDG_RUNTIME_DIR/bus` (systemd's user bus). Never autolaunched: with
/// neither there is no bus, and nothing is started to make one.
package enum SessionBusAddress {
    package static func resolve(_ value: (String) -> String? = ProcessEnvironment.value) -> Result<String, NoBus> {
        if let address = value("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty {
            // An autolaunch address, anywhere in the list (clients try each
            // in turn), would start a bus: never.
            guard !address.split(separator: ";").contains(where: { $0.hasPrefix("autolaunch:") }) else {
                return .failure(NoBus(reason: "DBUS_SESSION_BUS_ADDRESS asks for autolaunch, which Tether never does"))
            }
            // The common address, a socket's path: with nothing there, there
            // is no bus, known without a connection attempt.
            if address.hasPrefix("unix:path="), !address.contains(";"), !address.contains(","), !address.contains("%") {
                let path = String(address.dropFirst("unix:path=".count))
                guard isSocket(path) else { return .failure(NoBus(reason: "no bus listens at \(path)")) }
            }
            return .success(address)
        }
        guard let runtime = value("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else {
            return .failure(NoBus(reason: "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"))
        }
        let path = runtime + "/bus"
        guard isSocket(path) else {
            return .failure(NoBus(reason: "DBUS_SESSION_BUS_ADDRESS is not set and \(path) is no socket"))
        }
        return .success("unix:path=" + escaped(path))
    }

    private static func isSocket(_ path: String) -> Bool {
        var information = stat()
        return stat(path, &information) == 0 && information.st_mode & S_IFMT == S_IFSOCK
    }

    package struct NoBus: Error, CustomStringConvertible {
        package let reason: String
        package var description: String { reason }
    }

    /// A D-Bus address value: bytes outside `[-0-9A-Za-z_/.\*]` as `%XX`.
    package static func escaped(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            let character = Character(Unicode.Scalar(byte))
            if character.isASCII && (character.isLetter || character.isNumber || "-_/.\\*".contains(character)) {
                result.append(character)
            } else {
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return result
    }
}
