/// The user units `tether service install` writes, generated here only:
/// templates, one instance per group (named by `systemd-escape --path` of
/// the group, as systemd's convention for paths is), so a second group
/// gets a second host. `tether@.socket` listens on the group's socket, so
/// the first client starts `tether@.service`, the host (Type=notify, its
/// watchdog pinged from the host's loop, its cgroup delegated for memory
/// and pids). What differs per group (the command's arguments, the
/// watchdog, where it writes) is the instance's drop-in.
struct ServiceUnits {
    static let socketTemplate = "tether@.socket"
    static let serviceTemplate = "tether@.service"
    /// The units of the single-group installs before templates: moved over.
    static let oldSocketName = "tether.socket"
    static let oldServiceName = "tether.service"
    /// The drop-in's file name in `tether@INSTANCE.service.d/`.
    static let dropInName = "50-tether.conf"
    /// How the templates begin: what uninstall and install may remove as theirs.
    static let writtenMark = "# Written by tether service"
    /// The default `WatchdogSec=`: the host pings at half of it (`ServiceWatchdog`).
    static let defaultWatchdogSeconds = 30

    let executable: String
    let groupPath: String
    /// `systemd-escape --path` of the group.
    let instance: String
    /// `--extensions-dir` and `--extension` as given to install.
    let hostArguments: [String]
    /// `WatchdogSec=`; 0: none.
    var watchdogSeconds = defaultWatchdogSeconds

    var socketName: String { "tether@\(instance).socket" }
    var serviceName: String { "tether@\(instance).service" }
    var dropInDirectory: String { serviceName + ".d" }

    var socket: String {
        """
        # Written by tether service templates or install: a group's socket (the instance
        # is the group's path, systemd-escape --path; %f, that path). The first client
        # (tether status, push, an extension) starts tether@.service.
        [Unit]
        Description=Tether host socket for %f

        [Socket]
        ListenStream=%f/host.sock
        SocketMode=0600
        DirectoryMode=0700

        [Install]
        WantedBy=sockets.target

        """
    }

    var service: String {
        let command = ([executable, "host", "--group"].map(Self.quoted) + ["\"%f\""]).joined(separator: " ")
        return """
            # Written by tether service templates or install: the host of one group (the
            # instance is the group's path, systemd-escape --path).
            [Unit]
            Description=Tether host for %f
            Requires=tether@%i.socket
            After=tether@%i.socket

            [Service]
            Type=notify
            NotifyAccess=main
            ExecStart=\(command)
            # Its own cgroup, delegated: memory.max and pids.max per extension.
            Delegate=memory pids
            WatchdogSec=\(Self.defaultWatchdogSeconds)
            Restart=on-failure
            # SIGTERM to the host alone: it stops its extensions itself.
            KillMode=mixed
            TimeoutStopSec=30
            ReadWritePaths=-%f
            \(Self.hardening)

            [Install]
            WantedBy=default.target

            """
    }

    /// What this group's host needs beyond the template: its arguments,
    /// its watchdog, and the group's parent writable (its secrets beside it).
    var dropIn: String {
        let command = ([executable, "host", "--group", groupPath] + hostArguments).map(Self.quoted).joined(separator: " ")
        let parent = groupPath.lastIndex(of: "/").map { String(groupPath[..<$0]) } ?? groupPath
        return """
            # Written by tether service install for \(Self.specifiers(groupPath)).
            [Service]
            ExecStart=
            ExecStart=\(command)
            WatchdogSec=\(watchdogSeconds)
            ReadWritePaths=\(Self.quotedPath("-" + parent))

            """
    }

    /// Every setting of systemd's hardening that leaves the host's job
    /// intact (where it writes: the instance's `ReadWritePaths=`) (the systemd tier launches, fetches and stops under them).
    /// Not: a system call allowlist (each extension has its own; the host
    /// makes worlds, Landlock rulesets and filters, which systemd 252's
    /// groups do not name), ProtectControlGroups (its cgroup is delegated to it),
    /// RestrictNamespaces of user, mount, PID, IPC, cgroup and network
    /// (extensions' worlds), PrivateNetwork (widgets fetch),
    /// MemoryDenyWriteExecute (inherited: a Python extension's ctypes
    /// writes code), ProtectHome (the group lives there). A user manager
    /// can drop capabilities and make namespaces only in a user namespace
    /// of the unit's own: PrivateUsers=yes (only the user is mapped there).
    static let hardening = """
        # Hardening (systemd-analyze security: docs/operations.md).
        PrivateUsers=yes
        NoNewPrivileges=yes
        CapabilityBoundingSet=
        RestrictSUIDSGID=yes
        LockPersonality=yes
        RestrictRealtime=yes
        SystemCallArchitectures=native
        SystemCallFilter=~@clock @cpu-emulation @debug @module @obsolete @raw-io @reboot @swap
        SystemCallErrorNumber=EPERM
        RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
        RestrictNamespaces=user mnt pid ipc cgroup net
        UMask=0077
        KeyringMode=private
        ProtectSystem=strict
        PrivateTmp=yes
        PrivateDevices=yes
        ProtectKernelModules=yes
        ProtectKernelLogs=yes
        ProtectKernelTunables=yes
        ProtectClock=yes
        ProtectHostname=yes
        """

    /// A unit file is lines: no control character can be carried in one.
    static func holdsControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// A path as an error shows it: control characters escaped.
    static func shown(_ text: String) -> String {
        "'" + text.unicodeScalars.map { holdsControlCharacter(String($0)) ? $0.escaped(asASCII: true) : String($0) }.joined() + "'"
    }

    /// One path of a path list setting (`ReadWritePaths=`): quoted, with
    /// `\`, `"` and `%` escaped (a space would end it unquoted).
    static func quotedPath(_ path: String) -> String {
        "\"" + specifiers(path).replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    /// `%` starts a specifier in every unit setting.
    static func specifiers(_ text: String) -> String { text.replacing("%", with: "%%") }

    /// One word of `ExecStart=`: quoted, with `\`, `"`, `%` and `$` escaped.
    static func quoted(_ word: String) -> String {
        var escaped = ""
        for character in word {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "%": escaped += "%%"
            case "$": escaped += "$$"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }
}
