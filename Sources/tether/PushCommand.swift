import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherIPC

struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a push through the notification extensions and print what was delivered.",
        discussion: """
            PAYLOAD is a JSON object, such as '{"title":"Order shipped","body":"#42 is on its way"}', \
            or - to read it from standard input. Each attached notification extension may rewrite \
            it within the time budget; one that runs out of time has the original delivered. With \
            no notification extension attached, the original is delivered as is. Prints one line \
            per delivery: who delivered it and the content.

            When the host shows pushes on the desktop (see `tether status`), the delivered content \
            is shown through the notification server: "title" is its summary, "body" its text, \
            a push with the "id" of an earlier one replaces it; "urgency" (low, normal, critical), \
            "expiryMilliseconds" (0: until closed), "actions" ([{"key","label"}], at most 8) and \
            "category" are passed on; "showOnDesktop": false keeps it off the desktop. A title over \
            512 bytes, a body over 4096, or control characters other than newline and tab are \
            refused (exit 2). With --wait, waits for the notification shown to be closed or to \
            have an action invoked, prints that, and exits 0 (1 if it was not shown).
            """
    )

    @Argument(help: ArgumentHelp("The payload as a JSON object, or - for standard input.", valueName: "PAYLOAD"))
    var payload: String

    @Option(help: ArgumentHelp("The time budget for rewriting, overriding each extension's own (30 s by default; at most 60 s).",
                               valueName: "SECONDS"))
    var budget: Seconds?

    @OptionGroup var group: GroupOptions

    @Flag(help: "Print one JSON object: {\"delivered\": [{extension, content, modified, timedOut}], \"desktop\": {shown, notification?, reason?}} (with --wait, and \"event\").")
    var json = false

    @Flag(help: "After delivery, wait until the notification shown on the desktop is closed or one of its actions is invoked, and print which.")
    var wait = false

    @Option(help: ArgumentHelp("With --wait: give up after SECONDS and exit 1.", valueName: "SECONDS"))
    var timeout: Seconds?

    func validate() throws {
        if timeout != nil && !wait { throw ValidationError("--timeout applies only with --wait.") }
    }

    func run() throws {
        let text = payload == "-" ? try readStandardInput(limit: 1 << 20, what: "the payload") : payload
        guard let value = try? JSONCodec.parse(Array(text.utf8)), case .object(let payload) = value else {
            throw CLIError.badInput("the payload must be a JSON object, such as '{\"title\":\"Hello\",\"body\":\"...\"}'")
        }
        // Refused here as the host would (exit 2): a display field too big or binary.
        do throws(RPCError) { _ = try DesktopNotification(payload: payload) } catch {
            let prefix = "Invalid params: "
            throw CLIError.badInput(error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message)
        }
        var request = PushRequest(payload: payload)
        var wait = PushDeliveryTimeout.defaultMilliseconds
        if let budget {
            guard budget.milliseconds > 0 else { throw CLIError.badInput("--budget must be above 0 seconds") }
            let maximum = UInt64(HostProtocol.maximumPushBudgetMilliseconds)
            guard budget.milliseconds <= maximum else {
                throw CLIError.badInput("--budget may be at most \(maximum / 1000) seconds")
            }
            request.budgetMilliseconds = budget.milliseconds
            wait = budget.milliseconds + PushDeliveryTimeout.slackMilliseconds
        }
        if self.wait {
            let session = try NotificationEventSession(group: try group.open(), mode: .push(request, waitMilliseconds: wait,
                                                       printAnswer: Self.printDeliveries), json: json, timeout: timeout)
            switch session.run() {
            case .success(let code): if code != 0 { throw ExitCode(code) }
            case .failure(let error): throw error
            }
            return
        }
        let answer = try group.host().push(request, waitingAtMost: wait)
        if json { return try printJSON(answer.wire) }
        Self.printDeliveries(answer)
    }

    /// One line per delivery, then the desktop's.
    static func printDeliveries(_ answer: PushAnswer) {
        for delivery in answer.delivered {
            let content = delivery.content.map { JSONValue.object($0).description } ?? "{}"
            guard let name = delivery.extensionName else {
                output("delivered as sent (no notification extension attached): \(content)")
                continue
            }
            if delivery.timedOut {
                output("delivered the original (\(name) ran out of its time budget): \(content)")
            } else {
                output("delivered by \(name)\(delivery.modified ? "" : " unchanged"): \(content)")
            }
        }
        // Said when shown; why not is in --json's `desktop` and `tether status`.
        if let display = answer.desktop, display.notification != nil { output(display.text) }
    }
}

/// How long `push` waits for the host: past the longest budget it may allow.
enum PushDeliveryTimeout {
    static let defaultMilliseconds = UInt64(HostProtocol.maximumPushBudgetMilliseconds) + 2 * slackMilliseconds
    static let slackMilliseconds: UInt64 = 2_000
}
