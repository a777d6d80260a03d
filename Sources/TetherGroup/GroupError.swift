import SystemPackage

/// Everything that can go wrong in the group directory, each as one sentence
/// a user can act on. `isBadInput` separates a caller's mistake (exit 2)
/// from an environment problem (exit 3).
public enum GroupError: Error, Equatable, CustomStringConvertible {
    /// A feature name outside the rule (`FeatureName`).
    case invalidFeatureName(String)
    /// No `--group`, `TETHER_GROUP`, `XDG_STATE_HOME` or `HOME` to find it by.
    case noGroupDirectory
    /// A path in the group that is a symbolic link: never followed.
    case symlinkRefused(String)
    /// A lock or store file with more than one name: writing it would write
    /// through to the other name.
    case hardLinkRefused(String, links: UInt64)
    /// A path that must be a directory and is not.
    case notADirectory(String)
    /// A lock or store that is a FIFO, a device or a directory.
    case notARegularFile(String)
    /// A path owned by another user.
    case foreignOwner(String, uid: UInt32)
    /// A directory others may write to.
    case insecurePermissions(String, mode: UInt32)
    /// A system call that failed: what it did, on which path, and why.
    case system(String, path: String, Errno)
    /// A store file that failed to parse, moved aside to `keptAs`.
    case corruptStore(String, keptAs: String, reason: String)
    /// A defaults key that is empty, too long or not printable.
    case invalidKey(String)
    /// A value nested deeper than a store keeps.
    case valueTooDeep(String, limit: Int)
    /// A write that would make the store `bytes` long, over `limit`.
    case storeTooLarge(String, bytes: Int, limit: Int)
    /// The group's shared parts hold more than its host allows.
    case groupFull(String)
    /// Waited `seconds` for a lock another process holds (stopped or hung).
    case lockTimeout(String, seconds: Int)
    /// A store file with permissions for group or others (stores are 0600).
    case exposedFile(String, mode: UInt32)

    /// The caller's mistake (exit 2), not the environment's (exit 3).
    public var isBadInput: Bool {
        switch self {
        case .invalidFeatureName, .invalidKey, .valueTooDeep, .storeTooLarge: return true
        default: return false
        }
    }

    /// One sentence a user can act on.
    public var description: String {
        switch self {
        case .invalidFeatureName(let name):
            return "invalid feature name \(quotedInput(name)): use 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter or digit"
        case .noGroupDirectory:
            return "cannot find a group directory: pass --group DIR or set TETHER_GROUP, XDG_STATE_HOME or HOME"
        case .symlinkRefused(let path):
            return "refusing \(path): it is a symbolic link, and Tether never follows links in its group directory"
        case .hardLinkRefused(let path, let links):
            return "refusing \(path): it has \(links) hard links, and Tether never writes through a link in its group directory"
        case .notADirectory(let path):
            return "\(path) is not a directory"
        case .notARegularFile(let path):
            return "refusing \(path): it is not a regular file"
        case .foreignOwner(let path, let uid):
            return "refusing \(path): it is owned by uid \(uid), not by you (uid \(currentUID()))"
        case .insecurePermissions(let path, let mode):
            return "refusing \(path): its mode \(String(mode & 0o7777, radix: 8)) lets group or others write; run 'chmod 700 \(path)'"
        case .system(let operation, let path, let errno):
            return "cannot \(operation) \(path): \(errno.description)"
        case .corruptStore(let path, let keptAs, let reason):
            return "\(path) could not be read (\(reason)); it was moved aside to \(keptAs) and a fresh, empty store is used from now on"
        case .exposedFile(let path, let mode):
            return "refusing \(path): its mode \(String(mode & 0o7777, radix: 8)) lets group or others read it; run 'chmod 600 \(path)'"
        case .lockTimeout(let path, let seconds):
            return "another process has held \(path) for \(seconds) s; it may be stopped or hung (gave up waiting)"
        case .valueTooDeep(let key, let limit):
            return "the value for \(quotedInput(key)) is nested deeper than \(limit) levels; nothing was stored"
        case .storeTooLarge(let path, let bytes, let limit):
            return "\(path) would be \(bytes) bytes, over a store's limit of \(limit >> 20) MiB (what an extension can read under its memory limit); nothing was stored"
        case .groupFull(let path):
            return "the group \(path) is full: what its extensions may write holds more than its host allows (--group-limit; the host's log says how much); remove files from \(path)/shared or values from its defaults; nothing was stored"
        case .invalidKey(let key):
            return "invalid key \(quotedInput(key)): use 1 to 256 printable characters"
        }
    }
}
