import TetherRPC

/// What a launched extension is told in its environment. Of the host's own
/// variables only those that say where things are and how to speak pass
/// (paths, locale, time zone, proxies, certificate stores): anything else
/// the user set for their own tools (a cloud key, a forge token) is not a
/// third-party extension's to read, and a session service's address (the
/// bus, ssh-agent, the display) would point a confined extension at a door
/// out. Settings reach an extension through the group's defaults, as on iOS.
enum ChildEnvironment {
    static let inherited: Set<String> = [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TZDIR", "NO_COLOR",
        "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
    ]

    /// Locale categories (`LC_ALL`, `LC_TIME`, ...).
    static func isInherited(_ name: String) -> Bool {
        inherited.contains(name) || name.hasPrefix("LC_")
    }

    /// `host`'s variables that pass, and Tether's own: the group, the launch
    /// link's descriptor and the host's pid; sorted, as `NAME=value`.
    static func make(from host: [String: String], group: String, hostPID: Int32) -> [String] {
        var environment = host.filter { isInherited($0.key) }
        environment["TETHER_GROUP"] = group
        // Not the socket's path: a launch speaks through its link.
        environment[LaunchLink.variable] = String(LaunchLink.descriptor)
        environment["TETHER_HOST_PID"] = String(hostPID)
        return environment.map { "\($0.key)=\($0.value)" }.sorted()
    }
}
