import Testing
import TetherIPC
import TetherJSON

/// A widget's entry and its updates read back what they write; what no bar
/// should carry is refused with the field at fault.
@Suite struct WidgetMessagesTests {
    @Test func anEntryAndAnUpdateReadBackWhatTheyWrite() throws {
        let entry = WidgetEntry(text: "3 builds", tooltip: "queue", state: "warning", fraction: 0.25)
        #expect(try WidgetEntry(params: entry.json) == entry)
        let update = WidgetUpdate(name: "ci", entry: entry, running: true)
        #expect(WidgetUpdate(json: update.json) == update)
        // Before the widget shows anything: `"entry": null`.
        let none = WidgetUpdate(name: "ci", entry: nil, running: false)
        #expect(none.json["entry"] == .null)
        #expect(WidgetUpdate(json: none.json) == none)
    }

    @Test func aFractionIsClampedTo0Through1() throws {
        let high: JSONValue = .object(["text": .string("t"), "fraction": .integer(7)])
        let low: JSONValue = .object(["text": .string("t"), "fraction": .integer(-1)])
        #expect(try WidgetEntry(params: high).fraction == 1)
        #expect(try WidgetEntry(params: low).fraction == 0)
    }

    static let refused: [(JSONValue, String)] = {
        let long: JSONValue = .string(String(repeating: "x", count: 1_025))
        let longTooltip: JSONValue = .string(String(repeating: "é", count: 2_049))
        var cases: [(JSONValue, String)] = []
        cases.append((.object(["tooltip": .string("x")]), "\"text\" must be a string"))
        cases.append((.object(["text": .integer(3)]), "\"text\" must be a string"))
        cases.append((.object(["text": long]), "\"text\" holds 1025 bytes; at most 1024"))
        cases.append((.object(["text": .string("t"), "tooltip": longTooltip]), "\"tooltip\" holds 4098 bytes; at most 4096"))
        cases.append((.object(["text": .string("t"), "state": .string("a b")]), "\"state\" must be letters, digits, '-' or '_'"))
        cases.append((.object(["text": .string("t"), "state": .string("<b>")]), "\"state\" must be letters, digits, '-' or '_'"))
        cases.append((.object(["text": .string("t"), "fraction": .string("half")]), "\"fraction\" must be a number from 0 to 1"))
        return cases
    }()

    @Test(arguments: refused)
    func whatNoBarShouldCarryIsRefused(_ params: JSONValue, _ reason: String) {
        #expect(throws: RPCError.self) { try WidgetEntry(params: params) }
        do { _ = try WidgetEntry(params: params) } catch { #expect(error.message.contains(reason), "\(error.message)") }
    }
}
