import CTetherBus

/// A method call to an exported object, to be answered once: at once, or
/// later from the loop (the call is held until then). An unanswered call
/// is answered with an error when it goes, so a caller never waits on a
/// call the handler dropped.
package final class BusIncomingCall {
    package let message: BusMessage
    private weak var connection: BusConnection?
    private var call: OpaquePointer?

    init(connection: BusConnection, message: OpaquePointer, decoded: BusMessage) {
        self.connection = connection
        self.message = decoded
        tether_bus_message_ref(message)
        call = message
    }

    /// For a call whose arguments could not be read.
    convenience init(connection: BusConnection, message: OpaquePointer) {
        self.init(connection: connection, message: message,
                  decoded: BusMessage(kind: .call, path: nil, interface: nil, member: nil, sender: nil,
                                      errorName: nil, errorText: nil, arguments: []))
    }

    deinit {
        fail(name: "org.freedesktop.DBus.Error.Failed", "the call was dropped unanswered")
    }

    /// Lets go of a call its handler did not take, unanswered.
    func relinquish() {
        guard let call else { return }
        self.call = nil
        tether_bus_message_unref(call)
    }

    /// Answers with `values`.
    package func reply(_ values: [BusValue] = []) {
        guard let call else { return }
        self.call = nil
        defer { tether_bus_message_unref(call) }
        var answer: OpaquePointer?
        guard let connection, tether_bus_new_method_return(call, &answer) >= 0, let answer else { return }
        defer { tether_bus_message_unref(answer) }
        do throws(BusError) {
            try BusCoding.append(values, to: answer)
            try connection.send(answer, "an answer")
        } catch {
            // A value that cannot be written: the caller gets an error instead.
            sendError(call, connection, "org.freedesktop.DBus.Error.Failed", error.reason)
        }
    }

    /// Answers with the error `name` and its text.
    package func fail(name: String, _ text: String) {
        guard let call else { return }
        self.call = nil
        defer { tether_bus_message_unref(call) }
        guard let connection else { return }
        sendError(call, connection, name, text)
    }

    private func sendError(_ call: OpaquePointer, _ connection: BusConnection, _ name: String, _ text: String) {
        var answer: OpaquePointer?
        guard tether_bus_new_method_error(call, &answer, name, text) >= 0, let answer else { return }
        defer { tether_bus_message_unref(answer) }
        try? connection.send(answer, "an error answer")
    }
}
