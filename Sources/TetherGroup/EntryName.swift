#if canImport(Glibc)
import Glibc
#endif

/// A directory entry's name as the kernel gave it: its bytes, which need
/// not be UTF-8. A name decoded to a `String` and passed back names
/// another entry, or none (its bad bytes became U+FFFD): a file an
/// extension named so would escape a count or a removal that went by the
/// decoded name.
package struct EntryName: Hashable, Sendable {
    /// NUL-terminated, as a C call takes it: `unlinkat(fd, name.cString, 0)`.
    package let cString: [CChar]

    package init(_ text: String) {
        cString = Array(text.utf8CString)
    }

    /// `pointer`'s bytes up to its NUL.
    package init(_ pointer: UnsafePointer<CChar>) {
        cString = Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer) + 1))
    }

    /// The bytes, without the NUL.
    package var bytes: [UInt8] { cString.dropLast().map { UInt8(bitPattern: $0) } }

    /// For messages and for matching the names Tether makes (ASCII); never
    /// for a call.
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The name as text when it is UTF-8, so that the text names it; nil
    /// otherwise. Tether's own names (ASCII) are matched through this.
    package var exactText: String? { String(validating: bytes, as: UTF8.self) }
}
