import Testing
import TetherBus
import TetherIPC
@testable import TetherHost

/// IBus's serialized objects and key numbers, as its daemon reads them:
/// signatures checked against what ibus-daemon expects (IBusSerializable:
/// type name, property bag, fields).
@Suite struct IBusSerializationTests {
    @Test func aTextIsAVariantIBusTextWithAnEmptyAttributeListAndReadsBack() {
        let text = IBusSerialization.text("héllo")
        #expect(text.signature == "v")
        #expect(text.unwrapped.signature == "(sa{sv}sv)")
        #expect(IBusSerialization.string(ofText: text) == "héllo")
        #expect(IBusSerialization.string(ofText: text.unwrapped) == "héllo")
        // Anything else is no text.
        #expect(IBusSerialization.string(ofText: .string("héllo")) == nil)
        #expect(IBusSerialization.string(ofText: .variant(.structure([.string("IBusAttribute"), .properties([]),
                                                                        .string("x")]))) == nil)
        #expect(IBusSerialization.string(ofText: .structure([.string("IBusText")])) == nil)
    }

    @Test func aComponentCarriesEachEngineInIBussOrder() {
        let engines = [IBusSerialization.Engine(name: "tether:emoji", longName: "Emoji", description: "d", language: "en"),
                       IBusSerialization.Engine(name: "tether:kana", longName: "Kana", description: "k", language: "ja")]
        let component = IBusSerialization.component(name: "org.freedesktop.IBus.Tether", version: "1", engines: engines)
        let fields = component.unwrapped.fields ?? []
        #expect(fields.first?.stringValue == "IBusComponent")
        #expect(fields.count == 12)
        let descriptions = fields.last?.items ?? []
        #expect(descriptions.count == 2)
        let kana = descriptions.last?.unwrapped.fields ?? []
        #expect(kana.first?.stringValue == "IBusEngineDesc")
        // name, long name, description, language, then license and author.
        #expect(kana[2...5].map(\.stringValue) == ["tether:kana", "Kana", "k", "ja"])
        #expect(kana.count == 19)
        #expect(kana[10] == .uint32(0))
    }

    /// Printable Latin-1 and Unicode keysyms type their character; control
    /// and format characters, and keys that are no characters, type none.
    @Test func aKeysymTypesItsCharacterOrNone() {
        #expect(IBusKey.text(0x61) == "a")
        #expect(IBusKey.text(0xe9) == "é")
        #expect(IBusKey.text(0x0100_20ac) == "€")
        #expect(IBusKey.text(0x0101_f600) == "😀")
        #expect(IBusKey.text(IBusKey.backSpace) == nil)
        #expect(IBusKey.text(0x1f) == nil)
        #expect(IBusKey.text(0x0100_200b) == nil, "a zero-width space is a format character")
        #expect(IBusKey.text(0x0100_d800) == nil, "a surrogate is no character")
        #expect(IBusKey.text(0x0111_0000) == nil, "past Unicode")
    }

    @Test func aFieldsPurposeIsItsKindAndPasswordsAreNoKeyboardsToSee() {
        #expect(IBusKey.kind(purpose: 0) == .field(.text))
        #expect(IBusKey.kind(purpose: 2) == .field(.number))
        #expect(IBusKey.kind(purpose: 4) == .field(.phone))
        #expect(IBusKey.kind(purpose: 5) == .field(.url))
        #expect(IBusKey.kind(purpose: 6) == .field(.email))
        #expect(IBusKey.kind(purpose: 7) == .field(.name))
        #expect(IBusKey.kind(purpose: 8) == .secret)
        #expect(IBusKey.kind(purpose: 9) == .secret)
        #expect(IBusKey.kind(purpose: 10) == .field(.terminal))
        #expect(IBusKey.kind(purpose: 99) == .field(.text))
        #expect(IBusKey.shortcutMasks & IBusKey.releaseMask == 0)
    }
}
