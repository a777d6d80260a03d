import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// Every secrets directory this user has made, wherever its group lives, so
/// that a host can hide all of them from a read-only keyboard, not only its
/// own group's: `${XDG_STATE_HOME:-~/.local/state}/tether/.secrets-index/`,
/// one symlink per secrets directory, named by a hash of its path. A
/// symlink is made whole or not at all, so the index needs no lock. It is
/// outside every group, so no confined role can write it.
package enum SecretsIndex {
    /// At most this many are hidden (the most recently registered): each
    /// costs a listing of the directories on the way to it at every launch.
    package static let limit = 64

    /// Adds `secrets` (best effort: a confined process cannot, and need not).
    package static func register(_ secrets: String, variable: (String) -> String? = ProcessEnvironment.value) {
        guard secrets.hasPrefix("/"), let index = directory(variable: variable) else { return }
        var prefix = ""
        for component in index.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST { return }
        }
        let link = index + "/" + PathHash.hex(secrets)
        if symlink(secrets, link) == 0 || errno != EEXIST { return }
        // Refreshed, so that the most recently used come first.
        _ = utimensat(AT_FDCWD, link, nil, AT_SYMLINK_NOFOLLOW)
    }

    /// The secrets directories that exist, the most recently registered
    /// first, at most `limit`. Links to what is gone are removed.
    package static func known(variable: (String) -> String? = ProcessEnvironment.value) -> [String] {
        guard let index = directory(variable: variable) else { return [] }
        let fd = open(index, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        // Only an index of ours that no one else could fill.
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else { return [] }
        guard let stream = fdopendir(dup(fd)) else { return [] }
        defer { closedir(stream) }
        var found: [(path: String, since: Int)] = []
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(entry)
            guard name.utf8.count == 16 else { continue }
            var target = [CChar](repeating: 0, count: 4097)
            let length = readlinkat(fd, name, &target, 4096)
            guard length > 0 else { continue }
            let path = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var linkInfo = stat(), targetInfo = stat()
            guard fstatat(fd, name, &linkInfo, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if lstat(path, &targetInfo) != 0 {
                if errno == ENOENT || errno == ENOTDIR { _ = unlinkat(fd, name, 0) }
                continue
            }
            guard targetInfo.st_mode & S_IFMT == S_IFDIR else { continue }
            found.append((path, Int(linkInfo.st_mtim.tv_sec)))
        }
        return found.sorted { ($0.since, $0.path) > ($1.since, $1.path) }.prefix(limit).map(\.path)
    }

    /// The index, or nil where no state directory can be found.
    static func directory(variable: (String) -> String?) -> String? {
        // As the default group's root (a relative XDG_STATE_HOME is invalid).
        if let xdg = variable("XDG_STATE_HOME"), xdg.hasPrefix("/") { return xdg + "/tether/.secrets-index" }
        if let home = variable("HOME"), home.hasPrefix("/") { return home + "/.local/state/tether/.secrets-index" }
        return nil
    }
}
