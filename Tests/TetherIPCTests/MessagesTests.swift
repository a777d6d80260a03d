import Testing
import TetherIPC
import TetherJSON
import TetherLoop

/// The socket's messages read back what they write, and refuse what no
/// peer may send with the one sentence each refusal has.
@Suite struct MessagesTests {
    @Test func aHelloReadsBackWhatItWrites() throws {
        let hello = ExtensionHello(name: "clock", role: "widget", pid: 42, openAccess: false,
                                   timeBudgetMilliseconds: 900, events: [HostNotification.storeChanged], endsOnSigterm: true)
        #expect(try ExtensionHello(params: hello.json) == hello)
        #expect(hello.json["endsOnSigterm"] == .bool(true))
        let json = hello.json
        #expect(json["protocol"] == .integer(HostProtocol.current))
        #expect(json["sdk"] == .string(TetherVersion.current), "the SDK says the one version `tether --version` says")
    }

    /// A hello written by hand (a shell extension): no version is version 1.
    @Test func aHandWrittenHelloWithoutAVersionSpeaksVersionOne() throws {
        let hello = try ExtensionHello(params: ["name": "sh-widget", "role": "widget", "timeBudgetMilliseconds": .null])
        #expect(hello.protocolVersion == 1)
        #expect(hello.timeBudgetMilliseconds == nil)
        #expect(hello.openAccess == nil)
        #expect(hello.events.isEmpty)
        #expect(!hello.endsOnSigterm)
    }

    /// An optional field there with another type, or out of its range, is
    /// refused with the field named: never taken for absent.
    @Test func anOptionalFieldOfTheWrongKindIsRefusedNotIgnored() throws {
        let hello: [String: JSONValue] = ["name": "x", "role": "notification"]
        for (field, value, expected) in [
            ("timeBudgetMilliseconds", JSONValue(-1), "a positive integer (milliseconds)"),
            ("timeBudgetMilliseconds", 1.5, "a positive integer (milliseconds)"),
            ("timeBudgetMilliseconds", "900", "a positive integer (milliseconds)"),
            ("timeBudgetMilliseconds", 1e30, "a positive integer (milliseconds)"),
            ("openAccess", "yes", "true or false"), ("pid", "1", "an integer"), ("sdk", 6, "a string"),
            ("endsOnSigterm", 1, "true or false"),
            ("events", "host.storeChanged", "an array of strings"), ("events", [JSONValue(1)], "an array of strings"),
        ] as [(String, JSONValue, String)] {
            var params = hello
            params[field] = value
            #expect(throws: RPCError.invalidParams("\"\(field)\" must be \(expected)")) {
                try ExtensionHello(params: .object(params))
            }
        }
        #expect(throws: RPCError.invalidParams("\"untilAttached\" must be true or false")) {
            try WidgetWatchRequest(wire: ["name": "clock", "untilAttached": "yes"])
        }
        #expect(try WidgetWatchRequest(wire: ["name": "clock"]).untilAttached == false)
        for keys: JSONValue in ["theme", [JSONValue("theme"), 2]] {
            #expect(throws: RPCError.invalidParams("\"keys\" must be an array of strings")) {
                try DefaultsChange(wire: ["keys": keys])
            }
        }
        #expect(try DefaultsChange(wire: ["keys": ["theme"]]).keys == ["theme"])
        #expect(try DefaultsChange(wire: [:]).keys.isEmpty)
    }

    @Test func aHelloOutsideTheProtocolIsRefusedWithItsSentence() {
        #expect(throws: RPCError.unsupportedProtocol(99, supported: HostProtocol.supported)) {
            try ExtensionHello(params: ["name": "x", "role": "widget", "protocol": 99])
        }
        let unsupported = RPCError.unsupportedProtocol(9, supported: 1...2)
        #expect(unsupported.code == RPCError.unsupportedProtocolCode)
        #expect(unsupported.data?["supported"]?["max"] == 2)
        #expect(throws: RPCError.invalidParams("\"protocol\" must be an integer")) {
            try ExtensionHello(params: ["name": "x", "role": "widget", "protocol": "2"])
        }
        #expect(throws: ExtensionHello.invalidName) { try ExtensionHello(params: ["name": 7, "role": "widget"]) }
        #expect(throws: ExtensionHello.invalidRole) { try ExtensionHello(params: ["name": "x"]) }
        // The name is judged before the role, by the rule the host gives.
        #expect(throws: ExtensionHello.invalidName) {
            try ExtensionHello(params: ["name": "Bad/Name"], isValidName: { !$0.contains("/") })
        }
    }

    @Test func aPushNeedsAnObjectAndABudgetWithinTheCeiling() throws {
        let push = PushRequest(payload: ["title": "Hi"], budgetMilliseconds: 2_000)
        #expect(try PushRequest(params: push.json) == push)
        #expect(throws: PushRequest.payloadNotAnObject) { try PushRequest(params: ["payload": "text"]) }
        #expect(throws: PushRequest.payloadNotAnObject) { try PushReceive(receivedParams: ["payload": [1, 2]]) }
        for budget: JSONValue in [0, -1, .integer(HostProtocol.maximumPushBudgetMilliseconds + 1), "5"] {
            #expect(throws: RPCError.self) { try PushRequest(params: ["payload": [:], "budgetMilliseconds": budget]) }
        }
        // As an extension reads it, a budget that is not positive is none.
        #expect(try PushReceive(receivedParams: ["payload": [:], "budgetMilliseconds": 0]).budgetMilliseconds == nil)
    }

    @Test func deliveriesNameTheirExtensionOrNull() throws {
        let answer = PushAnswer(delivered: [
            DeliveredPush(content: ["title": "Hi"], modified: false, timedOut: false),
            DeliveredPush(extensionName: "rewriter", content: ["title": "HI"], modified: true, timedOut: false),
        ], desktop: DesktopDisplay(notification: 7))
        #expect(answer.wire["delivered"]?.arrayValue?.first?["extension"] == .null)
        #expect(answer.wire["desktop"]?["shown"] == true)
        let read = try PushAnswer(wire: answer.wire)
        #expect(read == answer)
        #expect(read.delivered.map(\.extensionName) == [nil, "rewriter"])
        // An older host's answer shows nothing on the desktop; a list is required.
        #expect(try PushAnswer(wire: ["delivered": []]).desktop == nil)
        #expect(throws: RPCError.self) { try PushAnswer(wire: ["desktop": ["shown": false]]) }
        // An extension's answer whose content is no object delivers none.
        #expect(DeliveredPush(json: ["content": "x", "timedOut": true]).content == nil)
    }

    @Test func helloAnswerTokenAndEventsReadBack() throws {
        let answer = HelloAnswer(hostPID: 7, group: "/g", managed: true, openAccess: false, timeBudgetMilliseconds: nil,
                                 protocolVersion: 2, capabilities: HostProtocol.capabilities, events: ["store.changed"])
        #expect(HelloAnswer(json: answer.json) == answer)
        #expect(HelloAnswer(json: ["group": "/g"]) == nil)
        let grant = TokenGrant(accessToken: "a", expiresAt: JSONNumber(1_700_000_000))
        #expect(TokenGrant(json: grant.json) == grant)
        #expect(TokenRequest().json == nil)
        #expect(TokenRequest(params: TokenRequest(kind: "client", rejected: "old").json) == TokenRequest(kind: "client", rejected: "old"))
        #expect(StoreChange(params: StoreChange.credentials.json) == .credentials)
        #expect(StoreChange(params: ["store": "other"]) == nil)
        #expect(DefaultsChange(params: ["keys": ["a", 1, "b"]]).keys == ["a", "b"])
        #expect(throws: Subscription.unknownEvent(3)) { try Subscription(params: ["events": [3]]) }
    }

    /// A supervised extension's pid and last exit are given even when null;
    /// one started by hand shows only what applies to it.
    @Test func statusListsWhatAppliesAndReadsBack() {
        var supervised = ExtensionStatus(name: "clock", role: "widget", supervised: true)
        supervised.state = "idle"
        supervised.restarts = 0
        supervised.activation = "on-demand"
        supervised.sandbox = ["landlock": true]
        #expect(supervised.json["pid"] == .null)
        #expect(supervised.json["lastExit"] == .null)
        #expect(ExtensionStatus(json: supervised.json) == supervised)
        var byHand = ExtensionStatus(name: "kb", role: "keyboard", pid: 42)
        byHand.state = "attached"
        byHand.protocolVersion = 2
        #expect(byHand.json["lastExit"] == nil)
        #expect(byHand.json["protocol"] == 2)
        #expect(ExtensionStatus(json: byHand.json) == byHand)
        let status = HostStatus(pid: 7, since: "t", uptime: 1.5, group: "/g", socket: "/g/host.sock",
                                extensions: [supervised, byHand], features: ["rec"], connections: 1, extensionLinks: 1,
                                maximumConnections: 256, replyBudgetBytes: 1 << 20, maximumFeatures: 64,
                                evictedConnections: 0, droppedLogLines: 0)
        #expect(HostStatus(json: status.json) == status)
        #expect(status.json["limits"]?["maximumConnections"] == 256)
    }
}
