import SystemPackage
import TetherGroup

/// Why a host could not start, as one sentence.
package enum HostError: Error, CustomStringConvertible {
    case alreadyRunning(pid: Int32?)
    case group(GroupError)
    case socket(String, Errno)
    /// Something not a socket is where the socket goes (a directory?).
    case socketPathTaken(String, isDirectory: Bool)
    /// `start()` of a host that has started, or stopped, before.
    case startedBefore

    package var description: String {
        switch self {
        case .alreadyRunning(let pid?): "the host is already running (pid \(pid))"
        case .alreadyRunning(nil): "the host is already running"
        case .group(let error): error.description
        case .socket(let path, .fileNameTooLong):
            "the group directory's path is too long for a Unix socket (\(path) is over 107 bytes); use a shorter --group"
        case .socketPathTaken(let path, isDirectory: true):
            "cannot listen on \(path): a directory is there, not a host's socket; remove it (rmdir) and start again"
        case .socketPathTaken(let path, isDirectory: false):
            "cannot listen on \(path): a file is there, not a host's socket; move it away and start again (it was left as it is)"
        case .socket(let path, let errno): "cannot listen on \(path): \(errno)"
        case .startedBefore: "this host has started or stopped before: a host starts once (make a new one)"
        }
    }
}
