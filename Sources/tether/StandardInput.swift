#if canImport(Glibc)
import Glibc
#endif

/// All of standard input as text, refusing more than `limit` bytes (a
/// payload piped from a runaway producer must not fill memory).
func readStandardInput(limit: Int, what: String) throws -> String {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { throw CLIError.environment("cannot read \(what) from standard input (errno \(errno))") }
        if count == 0 { break }
        bytes += buffer[..<count]
        guard bytes.count <= limit else { throw CLIError.badInput("\(what) is larger than \(limit) bytes") }
    }
    return String(decoding: bytes, as: UTF8.self)
}
