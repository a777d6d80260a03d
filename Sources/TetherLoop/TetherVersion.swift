/// The package's version: what `tether --version`, `tether doctor`, the
/// host's start record, a hello's answer (`host.version`), the SDK's hello
/// (`sdk`) and the IBus component say, and what a Debian package of it is
/// named.
package enum TetherVersion {
    package static let current = "0.9.0"
}
