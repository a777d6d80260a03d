import TetherJSON

/// `push.send`: a payload for the notification extensions, and the time
/// budget a client gives them.
package struct PushRequest: Sendable, Equatable {
    package var payload: [String: JSONValue]
    package var budgetMilliseconds: UInt64?

    package init(payload: [String: JSONValue], budgetMilliseconds: UInt64? = nil) {
        self.payload = payload
        self.budgetMilliseconds = budgetMilliseconds
    }

    enum Field {
        static let payload = "payload", budgetMilliseconds = "budgetMilliseconds"
        static let extensionName = "extension", content = "content", modified = "modified", timedOut = "timedOut"
        static let delivered = "delivered"
    }

    /// Read from a request's params: a budget, when given, is a positive
    /// integer within the host's ceiling, and the display fields are
    /// well-formed (`DesktopNotification`).
    package init(params: JSONValue?) throws(RPCError) {
        guard case .object(let payload) = params?[Field.payload] ?? .null else { throw Self.payloadNotAnObject }
        _ = try DesktopNotification(payload: payload)
        var budget: UInt64?
        if let value = params?[Field.budgetMilliseconds] {
            let maximum = HostProtocol.maximumPushBudgetMilliseconds
            guard let milliseconds = value.intValue, milliseconds > 0, milliseconds <= maximum else {
                throw .invalidParams("\"\(Field.budgetMilliseconds)\" must be a positive integer of at most \(maximum) "
                                     + "(\(maximum / 1000) s)")
            }
            budget = UInt64(milliseconds)
        }
        self.init(payload: payload, budgetMilliseconds: budget)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.payload: .object(payload)]
        if let budgetMilliseconds { object[Field.budgetMilliseconds] = .integer(budgetMilliseconds) }
        return .object(object)
    }

    /// The one sentence for a payload that is no JSON object, wherever it is read.
    package static let payloadNotAnObject = RPCError.invalidParams("\"\(Field.payload)\" must be a JSON object")
}

/// `notification.receive`, from the host to one notification extension: the
/// payload and what is left of the budget (the same fields as a push).
package typealias PushReceive = PushRequest

extension PushReceive {
    /// As the extension reads it: a budget that is not positive is none.
    package init(receivedParams params: JSONValue?) throws(RPCError) {
        guard case .object(let payload) = params?[Field.payload] ?? .null else { throw Self.payloadNotAnObject }
        self.init(payload: payload,
                  budgetMilliseconds: params?[Field.budgetMilliseconds]?.intValue.flatMap { $0 > 0 ? UInt64($0) : nil })
    }
}

/// What one notification extension made of a push: `notification.receive`'s
/// answer, and one entry of `push.send`'s.
package struct DeliveredPush: Sendable, Equatable {
    /// The extension that delivered it; nil when none was there to.
    package var extensionName: String?
    /// The content delivered: rewritten, or the original.
    package var content: [String: JSONValue]?
    package var modified: Bool
    package var timedOut: Bool

    package init(extensionName: String? = nil, content: [String: JSONValue]?, modified: Bool, timedOut: Bool) {
        self.extensionName = extensionName
        self.content = content
        self.modified = modified
        self.timedOut = timedOut
    }

    private typealias Field = PushRequest.Field

    /// Read leniently: a content that is no object is none (the host then
    /// delivers the original), a missing flag is false.
    package init(json: JSONValue) {
        let content: [String: JSONValue]? = if case .object(let object) = json[Field.content] ?? .null { object } else { nil }
        self.init(extensionName: json[Field.extensionName]?.stringValue, content: content,
                  modified: json[Field.modified]?.boolValue ?? false, timedOut: json[Field.timedOut]?.boolValue ?? false)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.modified: .bool(modified), Field.timedOut: .bool(timedOut),
                                           Field.content: content.map(JSONValue.object) ?? .null]
        if let extensionName { object[Field.extensionName] = .string(extensionName) }
        return .object(object)
    }

}

/// `push.send`'s answer: what each notification extension delivered, and
/// how it went on the desktop (nil from a host that does not show pushes).
package struct PushAnswer: WireMessage, Equatable {
    package var delivered: [DeliveredPush]
    package var desktop: DesktopDisplay?

    package init(delivered: [DeliveredPush], desktop: DesktopDisplay? = nil) {
        self.delivered = delivered
        self.desktop = desktop
    }

    private typealias Field = PushRequest.Field

    package init(wire: JSONValue?) throws(RPCError) {
        guard let answer = wire, let delivered = answer[Field.delivered]?.arrayValue else {
            throw .internalError("the host's answer to the push has no \"\(Field.delivered)\" list")
        }
        self.init(delivered: delivered.map(DeliveredPush.init(json:)), desktop: DesktopDisplay(answer: answer))
    }

    package var wire: JSONValue {
        // An entry no extension delivered names none: `"extension": null`.
        var object: [String: JSONValue] = [Field.delivered: .array(delivered.map { delivery in
            guard delivery.extensionName == nil, case .object(var object) = delivery.json else { return delivery.json }
            object[Field.extensionName] = .null
            return .object(object)
        })]
        if let desktop { object[DesktopDisplay.field] = desktop.json }
        return .object(object)
    }
}
