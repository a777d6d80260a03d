import FoundationEssentials
import Glibc
import TetherGroup
import TetherJSON
import TetherLog
import TetherLoop

/// Why a benchmark could not run, in one sentence; exit 3 (2 for bad usage).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    let code: Int32

    static func environment(_ message: String) -> BenchError { BenchError(description: message, code: 3) }
    static func badInput(_ message: String) -> BenchError { BenchError(description: message, code: 2) }
}

/// The executables the benchmarks drive: tether (`--tether`, else next to
/// tether-bench, else on PATH), the example extensions next to it, and the
/// demo auth server (`--auth-server`, else next to tether, else on PATH).
struct BenchTools: Sendable {
    let tether: String
    let authServer: String?
    /// Where tether is: the example extensions are built beside it.
    var bin: String { directoryName(tether) }

    init(tether explicit: String?, authServer: String?) throws {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        guard let tether = explicit.map({ absolutePath($0) }) ?? ExecutableSearch.find("tether", besides: own) else {
            throw BenchError.environment("tether-bench needs the tether executable: give --tether PATH (tether bench does)")
        }
        self.tether = tether
        self.authServer = authServer.map { absolutePath($0) } ?? ExecutableSearch.find("demo-auth-server", besides: tether)
    }

}

/// One line to stdout, at once.
func output(_ line: String) {
    LogOutput.standardOutput.write(line)
}

/// One JSON object on one line.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    output(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// The directory part of `path` ("." for a bare name).
func directoryName(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// A group directory at `path`, made if missing.
func openGroup(_ path: String) throws -> GroupDirectory {
    try GroupDirectory(path: path)
}

/// Writes `text` to a new file only its owner can read (a secret).
func writeSecretFile(_ path: String, _ text: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    else { throw BenchError.environment("cannot write \(path)") }
}

/// `value` with exactly `digits` decimals, never trapping.
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<max(0, min(digits, 6)) { scale *= 10 }
    guard let units = Int64(exactly: (value * scale).rounded()), units.magnitude < 1 << 53 else { return "\(value)" }
    let sign = units < 0 ? "-" : ""
    let whole = units.magnitude / UInt64(scale), fraction = String(units.magnitude % UInt64(scale))
    return digits <= 0 ? sign + String(whole) : sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line ends.
    var trimmed: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
