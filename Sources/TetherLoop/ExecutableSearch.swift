#if canImport(Glibc)
import Glibc
#endif

/// Where a program is: the PATH search `execvp` does, and an executable's
/// companions (`tether-bench`, `demo-auth-server` beside `tether`) looked
/// for beside it first.
package enum ExecutableSearch {
    /// The first executable `name` in `path` (a PATH value; an empty entry
    /// is the current directory, as for execvp).
    package static func onPath(_ name: String, path: String? = ProcessEnvironment.value("PATH")) -> String? {
        if case .found(let candidate) = search(name, path: path) { return candidate }
        return nil
    }

    /// What execvp's search finds: the first regular file `name` that this
    /// process may execute; else `.notExecutable` when one was found that
    /// it may not (execvp's EACCES), else `.missing`.
    package enum Outcome: Equatable, Sendable { case found(String), notExecutable, missing }

    /// The search itself; see `Outcome`.
    package static func search(_ name: String, path: String? = ProcessEnvironment.value("PATH")) -> Outcome {
        let path = path ?? "/usr/local/bin:/usr/bin:/bin"
        var refused = false
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var info = stat()
            guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if access(candidate, X_OK) == 0 { return .found(candidate) }
            refused = true
        }
        return refused ? .notExecutable : .missing
    }

    /// `name` in the directory of `file`, else on PATH.
    package static func find(_ name: String, besides file: String) -> String? {
        let directory = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        let beside = (directory.isEmpty ? "" : directory) + "/" + name
        return access(beside, X_OK) == 0 ? beside : onPath(name)
    }
}
