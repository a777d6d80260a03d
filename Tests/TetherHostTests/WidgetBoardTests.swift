import Testing
import TetherIPC
@testable import TetherHost

/// The widget board's decisions, without connections: a watcher here is a
/// plain object.
@Suite struct WidgetBoardTests {
    final class Watcher {}

    /// A change is told to the name's watchers, and only to them; the same
    /// entry again is no change; the last entry stays until forgotten.
    @Test func aChangeIsToldToItsWatchersOnly() {
        var board = WidgetBoard<Watcher>()
        let bar = Watcher(), other = Watcher()
        board.watch("clock", by: bar)
        board.watch("weather", by: other)
        #expect(board.show(WidgetEntry(text: "12:00"), for: "clock").map(ObjectIdentifier.init) == [ObjectIdentifier(bar)])
        #expect(board.show(WidgetEntry(text: "12:00"), for: "clock").isEmpty)
        #expect(board.show(WidgetEntry(text: "12:01"), for: "clock").count == 1)
        #expect(board.show(WidgetEntry(text: "sun"), for: "unwatched").isEmpty)
        #expect(board.entry("unwatched") == WidgetEntry(text: "sun"))
        board.forget("unwatched")
        #expect(board.entry("unwatched") == nil)
    }

    /// A watcher that goes stops watching everything, and hears of the
    /// names it was the last to watch (the host forgets those by hand).
    @Test func aWatcherThatGoesLeavesTheNamesItWasLastToWatch() {
        var board = WidgetBoard<Watcher>()
        let first = Watcher(), second = Watcher()
        for name in ["a", "b", "c"] { board.watch(name, by: first) }
        board.watch("b", by: second)
        board.watch("b", by: second)  // twice is once
        #expect(board.watchedCount(by: first) == 3)
        #expect(board.watchedCount(by: second) == 1)
        #expect(board.unwatchAll(by: first).sorted() == ["a", "c"])
        #expect(board.isWatched("b") && !board.isWatched("a"))
        #expect(board.watchers(of: "b").count == 1)
        #expect(board.unwatchAll(by: first).isEmpty)
        #expect(board.unwatchAll(by: second) == ["b"])
        #expect(board.watchedCount(by: second) == 0)
    }
}
