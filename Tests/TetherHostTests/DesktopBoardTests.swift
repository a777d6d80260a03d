import Logging
import Testing
import TetherIPC
import TetherJSON
import TetherLoop
@testable import TetherHost

/// The desktop's part of a push without a notification server: each
/// answer says why nothing was shown, and nothing waits for a bus.
@Suite struct DesktopBoardTests {
    func delivered(_ content: [String: JSONValue]) -> [DeliveredPush] {
        [DeliveredPush(extensionName: "notes", content: content, modified: false, timedOut: false)]
    }

    func answer(_ board: DesktopBoard, _ deliveries: [DeliveredPush]) -> DesktopDisplay? {
        var display: DesktopDisplay?
        board.show(deliveries, pushedBy: "notes", hiddenBy: { _ in false }) { display = $0 }
        return display
    }

    @Test func offOrWithoutABusEachPushIsAnsweredAtOnceWithWhy() throws {
        let loop = try EventLoop()
        let off = DesktopBoard(loop: loop, logger: Logger(label: "test"), enabled: false, groupPath: "/g/notes-app")
        off.start()
        #expect(off.status.state == .off)
        #expect(answer(off, delivered([DesktopNotification.Field.title: "hi"]))?.reason == "off (tether host --no-desktop-notifications)")
        // On, but before (or without) a session bus.
        let unstarted = DesktopBoard(loop: loop, logger: Logger(label: "test"), enabled: true, groupPath: "/g/notes-app")
        #expect(unstarted.status.state == .noSessionBus)
        #expect(answer(unstarted, delivered([DesktopNotification.Field.title: "hi"]))?.reason == "no session bus")
        unstarted.close()
        off.close()
    }
}
