import CLibUV
import SystemPackage

/// libuv reports failures as negated errno values on Unix, so they map
/// one-to-one onto `Errno`; callers see the same error type as for syscalls.
@inline(__always)
func uvCheck(_ rc: Int32) throws(Errno) {
    if rc < 0 { throw Errno(rawValue: -rc) }
}

/// The `Errno` for a negative libuv status code.
@inline(__always)
func uvErrno(_ rc: Int32) -> Errno { Errno(rawValue: -rc) }

/// libuv's end-of-stream marker (`UV_EOF`), which is not an errno.
let uvEOF: Int = Int(UV_EOF.rawValue)
