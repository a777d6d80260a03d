import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Python virtual environment for test servers, made by the tests
/// themselves from PyPI (`python3 -m venv`, then pip), once per build
/// directory and reused after: beside the built `tether`, so a clean clone
/// makes its own and `rm -rf .build` removes it.
package enum PythonEnvironment {
    /// What the test servers (and the metrics parser, and the keyring's
    /// prompter) import, pinned to the major versions they are written for.
    package static let requirements = ["fastapi>=0.110,<1", "uvicorn>=0.29,<1", "PyJWT>=2.8,<3",
                                       "prometheus_client>=0.17,<1", "jeepney>=0.8,<1"]

    /// The environment's python, made first if need be. Tests running at
    /// once wait for the one making it (a lock beside it).
    package static func python() throws -> String {
        let directory = URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent().appendingPathComponent("test-python").path
        let python = directory + "/bin/python"
        let marker = directory + "/.tether-requirements"
        let wanted = requirements.joined(separator: "\n")
        let lockFD = open(directory + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw PythonEnvironmentError("cannot open \(directory).lock: errno \(errno)") }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PythonEnvironmentError("cannot lock \(directory).lock: errno \(errno)") }
        }
        defer { flock(lockFD, LOCK_UN) }
        if (try? String(contentsOfFile: marker, encoding: .utf8)) == wanted, FileManager.default.isExecutableFile(atPath: python) {
            return python
        }
        try? FileManager.default.removeItem(atPath: directory)
        let made = try runCommand("/usr/bin/env", ["python3", "-m", "venv", directory], timeout: 120)
        guard made.status == 0 else {
            throw PythonEnvironmentError("python3 -m venv failed (on Debian: apt-get install python3-venv): \(made.stderr)")
        }
        let installed = try runCommand(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                                       + requirements, timeout: 600)
        guard installed.status == 0 else {
            throw PythonEnvironmentError("pip install \(requirements.joined(separator: " ")) failed: \(installed.stderr)")
        }
        try replaceFile(marker, wanted)
        return python
    }
}

package struct PythonEnvironmentError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
