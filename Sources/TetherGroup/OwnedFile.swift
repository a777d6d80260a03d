import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The checks every file Tether opens in a group makes on what it opened
/// (after `O_NOFOLLOW` refused a symlink at the last component): a regular
/// file (not a FIFO that would block), this user's (not a peer's planted
/// file), with one link (a hard link planted here would have us read or
/// write through it into the linked file).
enum OwnedFile {
    /// `fd`'s status when it passes; else closes `fd` and throws. `private`
    /// also refuses a file others can read or write (a store of secrets).
    static func inspect(_ fd: Int32, path: String, doing action: String, private: Bool = false) throws(GroupError) -> stat {
        let info: stat
        do { info = try Syscall.fstat(fd) } catch {
            Syscall.close(fd)
            throw .system(action, path: path, error)
        }
        let refusal: GroupError? =
            if !info.isRegularFile { .notARegularFile(path) }
            else if info.st_uid != currentUID() { .foreignOwner(path, uid: info.st_uid) }
            else if `private` && info.st_mode & 0o077 != 0 { .exposedFile(path, mode: UInt32(info.st_mode)) }
            else if info.st_nlink != 1 { .hardLinkRefused(path, links: UInt64(info.st_nlink)) }
            else { nil }
        if let refusal {
            Syscall.close(fd)
            throw refusal
        }
        return info
    }

    /// The descriptor `open` gives for `path` (nil: not there) and its
    /// status, inspected. A file replaced between the open and the look (a
    /// writer renamed a new one over it: no link left, which a planted hard
    /// link never has) is opened again: the path names the new one.
    static func opening(_ path: String, doing action: String, private: Bool = false,
                        _ open: () throws(GroupError) -> Int32?) throws(GroupError) -> (fd: Int32, info: stat)? {
        for _ in 0..<8 {
            guard let fd = try open() else { return nil }
            LockFaultInjection.at(.opened, path)
            do {
                return (fd, try inspect(fd, path: path, doing: action, private: `private`))
            } catch .hardLinkRefused(_, links: 0) {
                continue
            }
        }
        throw .system(action, path: path, .resourceBusy)
    }

    /// `path` opened for reading, or nil when there is none; a symlink is
    /// refused as such (`Syscall.open` follows none, nor waits on a FIFO).
    static func openForReading(_ path: String, doing action: String) throws(GroupError) -> Int32? {
        do throws(Errno) {
            return try Syscall.open(path, O_RDONLY)
        } catch .noSuchFileOrDirectory {
            return nil
        } catch .tooManySymbolicLinkLevels {
            throw .symlinkRefused(path)
        } catch {
            throw .system(action, path: path, error)
        }
    }
}
