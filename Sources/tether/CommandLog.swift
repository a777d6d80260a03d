import Logging
import TetherLog

/// Where a command other than `tether host` tells its events
/// (`Logger.command`). (The host strips `TETHER_*` from its children.)
enum CommandLog {
    static let logger = Logger.command(label: "tether.command")
}
