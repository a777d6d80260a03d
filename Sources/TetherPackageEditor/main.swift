#if canImport(Glibc)
import Glibc
#endif
import TetherGroup

// `TetherPackageEditor add-target MANIFEST ELEMENT`: what the new-extension
// plugin runs to add ELEMENT (a `.executableTarget(...)`, unindented) to
// MANIFEST's targets list. Exit 0: written (atomically, with AtomicFile);
// 3: left as it is, the reason on stdout; 1: an error, on stderr; 2: bad usage.

/// One line to standard error.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, arguments[0] == "add-target" else {
    printError("usage: TetherPackageEditor add-target MANIFEST ELEMENT")
    exit(2)
}
let path = arguments[1]
let bytes: [UInt8]
do {
    guard let read = try AtomicFile.read(path) else {
        printError("TetherPackageEditor: \(path) does not exist")
        exit(1)
    }
    bytes = read
} catch .symlinkRefused {
    // Renaming over it would replace the link, not edit what it points to.
    print("Package.swift is a symbolic link")
    exit(3)
} catch {
    printError("TetherPackageEditor: \(error)")
    exit(1)
}
guard let source = String(validating: bytes, as: UTF8.self) else {
    print("Package.swift is not UTF-8")
    exit(3)
}
switch TargetsListEdit.adding(arguments[2], to: source) {
case .uncertain(let reason):
    print(reason)
    exit(3)
case .edited(let text):
    var info = stat()
    let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
    do {
        try AtomicFile.write(Array(text.utf8), to: path, mode: mode)
    } catch {
        printError("TetherPackageEditor: \(error)")
        exit(1)
    }
}
