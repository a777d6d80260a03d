#if canImport(Glibc)
import Glibc
#endif

/// A `readdir` entry's name, read where it lies. `entry.pointee.d_name`
/// passed by value copies the whole 256-byte array, though the kernel's
/// record is as short as the name: for the last record of a full buffer
/// that reads past its end, a crash on a crowded directory.
package enum DirectoryEntry {
    /// The name's bytes, up to its NUL, as `body` sees them in place.
    package static func withName<R>(_ entry: UnsafeMutablePointer<dirent>, _ body: (UnsafePointer<CChar>) -> R) -> R {
        withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
            UnsafeMutableRawPointer(tuple).withMemoryRebound(to: CChar.self, capacity: 1) { body($0) }
        }
    }

    /// The name's own bytes.
    package static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> EntryName {
        withName(entry) { EntryName($0) }
    }

    /// The name as a string (not UTF-8 bytes repaired).
    package static func name(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withName(entry) { pointer in
            String(decoding: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
        }
    }
}
