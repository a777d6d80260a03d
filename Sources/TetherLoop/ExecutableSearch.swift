#if canImport(Glibc)
import Glibc
#endif

/// Where a program is: the PATH search `execvp` does, and an executable's
/// companions (`tether-bench`, `demo-auth-server` beside `tether`) looked
/// for beside it first.
public enum ExecutableSearch {
    /// The first executable `name` in `path` (a PATH value; an empty entry
    /// is the current directory, as for execvp).
    public static func onPath(_ name: String, path: String? = ProcessEnvironment.value("PATH")) -> String? {
        let path = path ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// `name` in the directory of `file`, else on PATH.
    public static func find(_ name: String, besides file: String) -> String? {
        let directory = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        let beside = (directory.isEmpty ? "" : directory) + "/" + name
        return access(beside, X_OK) == 0 ? beside : onPath(name)
    }
}
