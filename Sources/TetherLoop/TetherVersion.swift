/// The package's version: what `tether --version`, `tether doctor` and the
/// host's start record say, and what a Debian package of it is named.
package enum TetherVersion {
    package static let current = "0.9.0"
}
