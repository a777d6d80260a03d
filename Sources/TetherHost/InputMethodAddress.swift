#if canImport(Glibc)
import Glibc
#endif
import TetherBus
import TetherLoop

/// Where ibus-daemon listens, found as IBus's own clients find it:
/// `IBUS_ADDRESS`, else the address file the daemon writes for this
/// machine and display in `$XDG_CONFIG_HOME/ibus/bus`. A host started by
/// systemd has no `DISPLAY`: then the newest file of this machine whose
/// daemon still runs.
package enum InputMethodAddress {
    package struct NotFound: Error, CustomStringConvertible {
        package let reason: String
        package var description: String { reason }
    }

    /// The directory the daemon writes its address files in.
    static func directory(_ value: (String) -> String? = ProcessEnvironment.value) -> String? {
        if let config = value("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/ibus/bus" }
        guard let home = value("HOME"), home.hasPrefix("/") else { return nil }
        return home + "/.config/ibus/bus"
    }

    static func resolve(_ value: (String) -> String? = ProcessEnvironment.value) -> Result<String, NotFound> {
        if let address = value("IBUS_ADDRESS"), !address.isEmpty { return .success(address) }
        guard let directory = directory(value) else { return .failure(NotFound(reason: "neither XDG_CONFIG_HOME nor HOME is set")) }
        guard let machine = machineID() else { return .failure(NotFound(reason: "this machine has no machine-id")) }
        var candidates: [String] = []
        if let file = value("IBUS_ADDRESS_FILE"), file.hasPrefix("/") { candidates.append(file) }
        if let display = displayName(value) { candidates.append("\(directory)/\(machine)-\(display)") }
        // The newest file of this machine first.
        candidates += files(in: directory, prefix: machine + "-").sorted { $0.modified > $1.modified }.map(\.path)
        for path in candidates {
            if let address = liveAddress(in: path) { return .success(address) }
        }
        return .failure(NotFound(reason: "no ibus-daemon runs for this user (no live address in \(directory))"))
    }

    /// Whether an ibus-daemon answers now, for `doctor`: its address, or why not.
    package static func reachable() -> Result<String, NotFound> {
        let address: String
        switch resolve() {
        case .success(let found): address = found
        case .failure(let notFound): return .failure(notFound)
        }
        do {
            let bus = try BlockingBus(address: address, timeoutMilliseconds: 2_000)
            _ = try bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                             member: "GetNameOwner", [.string(IBusSerialization.daemon)], timeoutMilliseconds: 2_000)
            return .success(address)
        } catch {
            return .failure(NotFound(reason: "ibus-daemon at \(address) does not answer: \(error.reason)"))
        }
    }

    /// `host-displaynumber` as IBus names its file: `unix-0` for `:0`,
    /// the Wayland socket's name under Wayland.
    static func displayName(_ value: (String) -> String?) -> String? {
        if let wayland = value("WAYLAND_DISPLAY"), !wayland.isEmpty { return "unix-" + wayland }
        guard let display = value("DISPLAY"), let colon = display.lastIndex(of: ":") else { return nil }
        let host = display[..<colon].isEmpty ? "unix" : String(display[..<colon])
        let number = display[display.index(after: colon)...].prefix { $0 != "." }
        return number.isEmpty ? nil : "\(host)-\(number)"
    }

    /// The file's address, if the daemon that wrote it still runs.
    static func liveAddress(in path: String) -> String? {
        guard let text = smallFile(path) else { return nil }
        var address: String?
        var pid: Int32?
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            if line.hasPrefix("IBUS_ADDRESS=") { address = String(line.dropFirst("IBUS_ADDRESS=".count)) }
            if line.hasPrefix("IBUS_DAEMON_PID=") { pid = Int32(line.dropFirst("IBUS_DAEMON_PID=".count)) }
        }
        guard let address, !address.isEmpty, let pid, pid > 0 else { return nil }
        guard kill(pid, 0) == 0 || errno == EPERM else { return nil }
        return address
    }

    private static func machineID() -> String? {
        for path in ["/var/lib/dbus/machine-id", "/etc/machine-id"] {
            if let text = smallFile(path) {
                let id = text.prefix { $0 != "\n" }
                if id.count == 32 { return String(id) }
            }
        }
        return nil
    }

    /// A small regular file's text: never a FIFO's (it would block) nor
    /// a symlink's, at most 4 KiB.
    private static func smallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var information = stat()
        guard fstat(fd, &information) == 0, information.st_mode & S_IFMT == S_IFREG else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard got > 0 else { return nil }
        return String(decoding: buffer[0..<got], as: UTF8.self)
    }

    private static func files(in directory: String, prefix: String) -> [(path: String, modified: Int)] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var found: [(String, Int)] = []
        while let entry = readdir(handle), found.count < 64 {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix) else { continue }
            var information = stat()
            let path = directory + "/" + name
            guard lstat(path, &information) == 0, information.st_mode & S_IFMT == S_IFREG else { continue }
            found.append((path, information.st_mtim.tv_sec))
        }
        return found
    }
}
