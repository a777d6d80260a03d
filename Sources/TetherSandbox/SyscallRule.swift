/// One entry of a seccomp policy: a system call, and what happens when it
/// is made with arguments that meet every condition (none: always).
///
/// Several rules may name the same call: the filter allows (or refuses)
/// it when any of them matches. A call no rule matches is refused with
/// the policy's default (EPERM).
struct SyscallRule: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case allow
        /// Fails with this errno: EPERM for "not here", ENOSYS where the
        /// caller has a fallback for a kernel without the call.
        case fail(Int32)
    }

    /// A test on one argument register: `(argument & mask) == value`, or
    /// `argument != value` with `notEqual`.
    struct Condition: Sendable, Equatable {
        let argument: UInt32
        let mask: UInt64
        let value: UInt64
        let notEqual: Bool

        /// The argument, read as the kernel reads an `int` or `unsigned
        /// int` (the upper half of the register is ignored), equals `value`.
        static func int(_ argument: UInt32, is value: UInt64) -> Condition {
            Condition(argument: argument, mask: 0xffff_ffff, value: value, notEqual: false)
        }

        /// The whole register differs from `value` (libseccomp has no masked
        /// inequality: an `int` with its upper half set differs too).
        static func word(_ argument: UInt32, isNot value: UInt64) -> Condition {
            Condition(argument: argument, mask: .max, value: value, notEqual: true)
        }

        /// The bits of `mask` in the argument are `value`.
        static func bits(_ argument: UInt32, _ mask: UInt64, are value: UInt64) -> Condition {
            Condition(argument: argument, mask: mask, value: value, notEqual: false)
        }

        /// A whole register (a pointer, a pid_t the kernel reads as such
        /// is still compared whole: -1 and 0 differ in every bit) equals `value`.
        static func word(_ argument: UInt32, is value: UInt64) -> Condition {
            Condition(argument: argument, mask: .max, value: value, notEqual: false)
        }
    }

    let name: String
    /// For calls newer than libseccomp 2.5's tables: numbers from 424 on
    /// are the same on every architecture (the unified table, Linux 5.1+).
    let number: Int32?
    let action: Action
    let conditions: [Condition]

    init(_ name: String, number: Int32? = nil, _ action: Action = .allow, when conditions: [Condition] = []) {
        self.name = name
        self.number = number
        self.action = action
        self.conditions = conditions
    }

    /// Every call in `names`, allowed outright.
    static func allow(_ names: [String]) -> [SyscallRule] { names.map { SyscallRule($0) } }

    /// `name` when its `argument` (an int) is one of `values`.
    static func allow(_ name: String, argument: UInt32, in values: [UInt64]) -> [SyscallRule] {
        values.map { SyscallRule(name, when: [.int(argument, is: $0)]) }
    }

    /// Every call in `names`, failing with `code`.
    static func fail(_ names: [String], _ code: Int32) -> [SyscallRule] {
        names.map { SyscallRule($0, .fail(code)) }
    }
}
