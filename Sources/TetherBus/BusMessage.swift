import CTetherBus

/// A message read off the bus, whole: its header's names and its values.
/// Reading everything at once keeps sd-bus's cursor out of callers' hands.
package struct BusMessage: Sendable {
    package enum Kind: Sendable { case call, reply, error, signal }
    package let kind: Kind
    package let path: String?
    package let interface: String?
    package let member: String?
    package let sender: String?
    /// For an error answer: its name and text.
    package let errorName: String?
    package let errorText: String?
    package let arguments: [BusValue]

    /// The message's values, or why they could not be read.
    static func decode(_ message: OpaquePointer) throws(BusError) -> BusMessage {
        let kind: Kind
        switch Int(tether_bus_message_type(message)) {
        case TETHER_BUS_METHOD_CALL: kind = .call
        case TETHER_BUS_METHOD_RETURN: kind = .reply
        case TETHER_BUS_METHOD_ERROR: kind = .error
        default: kind = .signal
        }
        return BusMessage(kind: kind, path: text(tether_bus_message_path(message)),
                          interface: text(tether_bus_message_interface(message)),
                          member: text(tether_bus_message_member(message)),
                          sender: text(tether_bus_message_sender(message)),
                          errorName: text(tether_bus_message_error_name(message)),
                          errorText: text(tether_bus_message_error_text(message)),
                          arguments: try BusCoding.readAll(message))
    }

    /// An error answer as a `BusError`; nil for any other message.
    package var error: BusError? {
        guard kind == .error else { return nil }
        return BusError(name: errorName, errorText ?? errorName ?? "the peer answered with an error")
    }

    private static func text(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}

/// Values onto and off sd-bus messages, one at a time.
enum BusCoding {
    /// Containers deeper than this are refused (D-Bus allows 64 in all).
    static let maximumDepth = 32

    static func append(_ values: [BusValue], to message: OpaquePointer) throws(BusError) {
        for value in values { try append(value, to: message) }
    }

    static func append(_ value: BusValue, to message: OpaquePointer) throws(BusError) {
        var result: Int32
        switch value {
        case .byte(var number): result = tether_bus_append_basic(message, y, &number)
        case .boolean(let flag):
            var number: Int32 = flag ? 1 : 0
            result = tether_bus_append_basic(message, b, &number)
        case .int16(var number): result = tether_bus_append_basic(message, n, &number)
        case .uint16(var number): result = tether_bus_append_basic(message, q, &number)
        case .int32(var number): result = tether_bus_append_basic(message, i, &number)
        case .uint32(var number): result = tether_bus_append_basic(message, u, &number)
        case .int64(var number): result = tether_bus_append_basic(message, x, &number)
        case .uint64(var number): result = tether_bus_append_basic(message, t, &number)
        case .double(var number): result = tether_bus_append_basic(message, d, &number)
        case .string(let text), .objectPath(let text), .signature(let text):
            // sd-bus takes a string's pointer itself, not a pointer to it.
            let type = value.signature.utf8.first.map { CChar(bitPattern: $0) } ?? s
            result = text.withCString { tether_bus_append_basic(message, type, $0) }
        case .array(let element, let items):
            result = try container(message, a, element) { () throws(BusError) in
                for item in items { try append(item, to: message) }
            }
        case .structure(let fields):
            result = try container(message, r, fields.map(\.signature).joined()) { () throws(BusError) in
                for field in fields { try append(field, to: message) }
            }
        case .variant(let inner):
            result = try container(message, v, inner.signature) { () throws(BusError) in try append(inner, to: message) }
        case .entry(let key, let item):
            result = try container(message, e, key.signature + item.signature) { () throws(BusError) in
                try append(key, to: message)
                try append(item, to: message)
            }
        }
        if result < 0 { throw BusError.errno(result, "cannot write a value of type \(value.signature)") }
    }

    private static func container(_ message: OpaquePointer, _ type: CChar, _ contents: String,
                                  _ body: () throws(BusError) -> Void) throws(BusError) -> Int32 {
        let opened = contents.withCString { tether_bus_open_container(message, type, $0) }
        guard opened >= 0 else { return opened }
        try body()
        return tether_bus_close_container(message)
    }

    static func readAll(_ message: OpaquePointer, depth: Int = 0) throws(BusError) -> [BusValue] {
        guard depth <= maximumDepth else { throw BusError("a message nests deeper than \(maximumDepth)") }
        var values: [BusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let found = tether_bus_peek_type(message, &type, &contents)
            if found < 0 { throw BusError.errno(found, "cannot read a message") }
            if found == 0 { return values }
            values.append(try read(message, type, contents.map { String(cString: $0) } ?? "", depth: depth))
        }
    }

    private static func read(_ message: OpaquePointer, _ type: CChar, _ contents: String,
                             depth: Int) throws(BusError) -> BusValue {
        switch type {
        case a, r, v, e:
            let entered = contents.withCString { tether_bus_enter_container(message, type, $0) }
            guard entered >= 0 else { throw BusError.errno(entered, "cannot read a message") }
            let inner = try readAll(message, depth: depth + 1)
            let left = tether_bus_exit_container(message)
            guard left >= 0 else { throw BusError.errno(left, "cannot read a message") }
            switch type {
            case a: return .array(element: contents, inner)
            case r: return .structure(inner)
            case v:
                guard let only = inner.first, inner.count == 1 else { throw BusError("a variant holds no one value") }
                return .variant(only)
            default:
                guard inner.count == 2 else { throw BusError("a dictionary entry holds no key and value") }
                return .entry(inner[0], inner[1])
            }
        case s, o, g:
            var pointer: UnsafePointer<CChar>?
            try basic(message, type, &pointer)
            let text = pointer.map { String(cString: $0) } ?? ""
            return type == s ? .string(text) : type == o ? .objectPath(text) : .signature(text)
        case y: var number: UInt8 = 0; try basic(message, type, &number); return .byte(number)
        case b: var number: Int32 = 0; try basic(message, type, &number); return .boolean(number != 0)
        case n: var number: Int16 = 0; try basic(message, type, &number); return .int16(number)
        case q: var number: UInt16 = 0; try basic(message, type, &number); return .uint16(number)
        case i: var number: Int32 = 0; try basic(message, type, &number); return .int32(number)
        case u: var number: UInt32 = 0; try basic(message, type, &number); return .uint32(number)
        case x: var number: Int64 = 0; try basic(message, type, &number); return .int64(number)
        case t: var number: UInt64 = 0; try basic(message, type, &number); return .uint64(number)
        case d: var number: Double = 0; try basic(message, type, &number); return .double(number)
        default:
            // A descriptor ('h') or a type this client does not take.
            throw BusError("a message carries a value of type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))', not read here")
        }
    }

    private static func basic<T>(_ message: OpaquePointer, _ type: CChar, _ value: inout T) throws(BusError) {
        let result = withUnsafeMutablePointer(to: &value) { tether_bus_read_basic(message, type, $0) }
        if result < 0 { throw BusError.errno(result, "cannot read a message") }
    }

    private static let y = code("y"), b = code("b"), n = code("n"), q = code("q"), i = code("i"), u = code("u")
    private static let x = code("x"), t = code("t"), d = code("d"), s = code("s"), o = code("o"), g = code("g")
    private static let a = code("a"), r = code("r"), v = code("v"), e = code("e")

    private static func code(_ letter: Unicode.Scalar) -> CChar { CChar(bitPattern: UInt8(letter.value)) }
}
