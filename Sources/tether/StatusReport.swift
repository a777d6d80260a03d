import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherGroup
import TetherJSON

/// The JSON form of a probe or watch answer (the contract in docs/commands.md): `target`,
/// `name`, `running`, `lock`, and when known `pid` and `since`.
struct StatusReport {
    let target: String
    let name: String
    let running: Bool
    let lock: String
    let pid: Int32?
    let since: String?

    init(target: LockTarget, lock: String, status: LockStatus) {
        self.target = target.kind
        self.name = target.name
        self.running = status.running
        self.lock = lock
        self.pid = status.running ? status.holder?.pid : nil
        self.since = status.running ? status.holder?.since : nil
    }

    var text: String { running ? "running" : "not running" }

    var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["target": .string(target), "name": .string(name), "running": .bool(running),
                                           "lock": .string(lock)]
        if let pid { object["pid"] = .integer(pid) }
        if let since { object["since"] = .string(since) }
        return .object(object)
    }
}

/// A list the host answered: `{key: wire}` with `json`, else a line per
/// item (`empty` for none).
func printList<Item>(_ items: [Item], wire: JSONValue, as key: String, json: Bool, empty: String,
                     line: (Item) -> String) throws {
    if json { return try printJSON(JSONValue.object([key: wire])) }
    if items.isEmpty { output(empty) }
    for item in items { output(line(item)) }
}

/// One JSON object on one line.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    output(String(decoding: data, as: UTF8.self))
}
