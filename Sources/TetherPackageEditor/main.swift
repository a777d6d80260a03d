#if canImport(Glibc)
import Glibc
#endif

// `TetherPackageEditor add-target MANIFEST ELEMENT`: what the new-extension
// plugin runs to add ELEMENT (a `.executableTarget(...)`, unindented) to
// MANIFEST's targets list. Exit 0: written (atomically); 3: left as it is,
// the reason on stdout; 1: an error, on stderr; 2: bad usage.

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, arguments[0] == "add-target" else {
    printError("usage: TetherPackageEditor add-target MANIFEST ELEMENT")
    exit(2)
}
let path = arguments[1]
var info = stat()
if lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK {
    // Renaming over it would replace the link, not edit what it points to.
    print("Package.swift is a symbolic link")
    exit(3)
}
guard let bytes = readFile(path) else {
    printError("TetherPackageEditor: cannot read \(path): \(String(cString: strerror(errno)))")
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
    do {
        try writeFileAtomically(path, text)
    } catch {
        printError("TetherPackageEditor: cannot write \(path): \(error)")
        exit(1)
    }
}
