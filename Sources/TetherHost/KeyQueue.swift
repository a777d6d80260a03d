import TetherIPC

/// The keys of one input context, answered in the order they came (IBus
/// invariant 28): each waits its turn, goes to the keyboard, and is
/// answered with the keyboard's answer, or unhandled (the application gets
/// it) once its deadline passes, the keyboard fails or the field loses
/// focus. A late answer is dropped: a key is never answered twice, so its
/// text is never typed twice. Events in, actions out: no timers and no I/O
/// here (the engine does those), so it is tested without either.
struct KeyQueue {
    struct Key: Equatable {
        let serial: UInt64
        let press: KeyPress
        /// On the loop's clock, in milliseconds.
        let deadline: UInt64
        /// False for a key the keyboard never sees (a release, a shortcut,
        /// a password's): answered unhandled in its turn.
        let forKeyboard: Bool
    }

    enum Action: Equatable {
        /// Hand the key to the keyboard.
        case send(UInt64, KeyPress)
        /// Answer the application: the keyboard's answer, or unhandled.
        case answer(UInt64, KeyAnswer)
        /// The first deadline still ahead, to wake up for (nil: none).
        case wake(UInt64?)
    }

    /// Keys an input context may have waiting; past it, every waiting key
    /// goes to the application at once (a keyboard that answers nothing
    /// cannot hold a typist's keys).
    static let maximumWaiting = 256

    private(set) var waiting: [Key] = []
    /// The serial of the first key while it is with the keyboard.
    private(set) var inFlight: UInt64?
    private var lastSerial: UInt64 = 0

    /// A key arrived at `now`; its serial, and what to do.
    mutating func arrived(_ press: KeyPress, forKeyboard: Bool, now: UInt64,
                          waitMilliseconds: UInt64 = KeyboardProtocol.answerMilliseconds) -> (UInt64, [Action]) {
        lastSerial += 1
        var actions: [Action] = []
        if waiting.count >= Self.maximumWaiting { actions += drain() }
        waiting.append(Key(serial: lastSerial, press: press, deadline: now + waitMilliseconds, forKeyboard: forKeyboard))
        return (lastSerial, actions + advance(now: now))
    }

    /// The keyboard answered key `serial` (nil: it could not: its call
    /// failed or its answer was refused).
    mutating func answered(_ serial: UInt64, _ answer: KeyAnswer?, now: UInt64) -> [Action] {
        // Late (its deadline passed and it was answered), or not ours.
        guard inFlight == serial, let first = waiting.first, first.serial == serial else { return [] }
        waiting.removeFirst()
        inFlight = nil
        let taken = first.deadline >= now ? answer ?? KeyAnswer(handled: false) : KeyAnswer(handled: false)
        return [.answer(serial, taken)] + advance(now: now)
    }

    /// Time passed: keys whose deadline is behind go to the application.
    mutating func tick(now: UInt64) -> [Action] {
        advance(now: now)
    }

    /// Every waiting key to the application, unhandled, in order (the
    /// keyboard went, the field lost focus, the engine ends).
    mutating func drain() -> [Action] {
        let keys = waiting
        waiting = []
        inFlight = nil
        return keys.map { .answer($0.serial, KeyAnswer(handled: false)) } + [.wake(nil)]
    }

    private mutating func advance(now: UInt64) -> [Action] {
        var actions: [Action] = []
        while let first = waiting.first {
            if first.deadline <= now || !first.forKeyboard {
                waiting.removeFirst()
                if inFlight == first.serial { inFlight = nil }
                actions.append(.answer(first.serial, KeyAnswer(handled: false)))
                continue
            }
            if inFlight != first.serial {
                inFlight = first.serial
                actions.append(.send(first.serial, first.press))
            }
            break
        }
        actions.append(.wake(waiting.first?.deadline))
        return actions
    }
}
