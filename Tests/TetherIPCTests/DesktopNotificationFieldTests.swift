import Testing
import TetherIPC
import TetherJSON

/// A payload's display fields as `Notify` takes them, and their limits.
@Suite struct DesktopNotificationFieldTests {
    func fields(_ text: String) throws -> DesktopNotification {
        guard case .object(let payload) = try JSONCodec.parse(Array(text.utf8)) else { throw RPCError.invalidParams("no object") }
        return try DesktopNotification(payload: payload)
    }

    func refusal(_ text: String) -> String {
        do { _ = try fields(text); return "" } catch let error as RPCError {
            return String(error.message.dropFirst("Invalid params: ".count))
        } catch { return "\(error)" }
    }

    @Test func everyFieldIsRead() throws {
        let notification = try fields(#"""
            {"id":"a","title":"T","body":"B\nline","urgency":"low","expiryMilliseconds":0,"category":"im",
             "actions":[{"key":"default","label":"Open"}],"showOnDesktop":false,"orderId":"kept as data"}
            """#)
        #expect(notification == DesktopNotification(id: "a", title: "T", body: "B\nline", urgency: .low, expiryMilliseconds: 0,
                                                    actions: [.init(key: "default", label: "Open")], category: "im",
                                                    showOnDesktop: false))
        #expect(notification.urgency?.level == 0)
        let bare = try fields(#"{"data":"anything, any size"}"#)
        #expect(bare.title.isEmpty && bare.body.isEmpty && bare.showOnDesktop && bare.actions.isEmpty && bare.expiryMilliseconds == nil)
    }

    @Test func eachLimitIsNamedWhenPassed() {
        #expect(refusal(#"{"id":"\#(String(repeating: "i", count: 257))"}"#).hasPrefix(#""id" is 257 bytes; at most 256"#))
        #expect(refusal(#"{"category":"\#(String(repeating: "c", count: 65))"}"#).hasPrefix(#""category" is 65 bytes"#))
        #expect(refusal(#"{"expiryMilliseconds":86400001}"#).hasPrefix(#""expiryMilliseconds" must be an integer from 0"#))
        #expect(refusal(#"{"expiryMilliseconds":-1}"#).hasPrefix(#""expiryMilliseconds" must be"#))
        #expect(refusal(#"{"actions":[{"key":"","label":"x"}]}"#).hasPrefix(#""actions[0]" must be"#))
        #expect(refusal(#"{"actions":[{"key":"k","label":"\#(String(repeating: "l", count: 65))"}]}"#)
                .hasPrefix(#""actions[0].label" is 65 bytes"#))
        #expect(refusal(#"{"body":"a\u001b[31mred"}"#).hasPrefix(#""body" holds the control character U+1B"#))
        #expect(refusal(#"{"title":"a\u0085b"}"#).hasPrefix(#""title" holds the control character U+85"#))
        #expect(refusal(#"{"showOnDesktop":"no"}"#) == #""showOnDesktop" must be true or false"#)
    }

    @Test func markupIsEscaped() {
        #expect(MarkupText.escaped(#"<b>"Tom" & 'Jerry'</b>"#)
                == "&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;")
        #expect(MarkupText.escaped("plain é") == "plain é")
    }
}
