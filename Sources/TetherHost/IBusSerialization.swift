import TetherBus
import TetherIPC

/// IBus's serialized objects, as its daemon reads and writes them on its
/// bus: each a structure of its type name, an empty property bag and its
/// fields (IBusSerializable). Only what the engine side needs.
enum IBusSerialization {
    static let daemon = "org.freedesktop.IBus"
    static let daemonPath = "/org/freedesktop/IBus"
    static let factoryPath = "/org/freedesktop/IBus/Factory"
    static let factoryInterface = "org.freedesktop.IBus.Factory"
    static let engineInterface = "org.freedesktop.IBus.Engine"
    static let serviceInterface = "org.freedesktop.IBus.Service"

    /// An IBusText with no attributes.
    static func text(_ string: String) -> BusValue {
        .variant(.structure([.string("IBusText"), .properties([]), .string(string),
                             .variant(.structure([.string("IBusAttrList"), .properties([]), .array(element: "v", [])]))]))
    }

    /// The string of an IBusText (in its variant or not); nil for anything else.
    static func string(ofText value: BusValue) -> String? {
        guard let fields = value.unwrapped.fields, fields.count >= 3, fields[0].stringValue == "IBusText" else { return nil }
        return fields[2].stringValue
    }

    /// One engine's description: its name, the name people see, its language.
    struct Engine: Equatable {
        let name: String
        let longName: String
        let description: String
        let language: String
    }

    /// An IBusComponent offering `engines`, served by the connection that registers it.
    static func component(name: String, version: String, engines: [Engine]) -> BusValue {
        .variant(.structure([
            .string("IBusComponent"), .properties([]), .string(name), .string("Tether keyboard extensions"),
            .string(version), .string("Apache-2.0"), .string("Tether"), .string(""), .string(""), .string(""),
            .array(element: "v", []), .array(element: "v", engines.map(description)),
        ]))
    }

    private static func description(_ engine: Engine) -> BusValue {
        // name, longname, description, language, license, author, icon,
        // layout, rank, then hotkeys, symbol, setup, layout variant and
        // option, version, textdomain, icon property key: IBus's order.
        .variant(.structure([
            .string("IBusEngineDesc"), .properties([]), .string(engine.name), .string(engine.longName),
            .string(engine.description), .string(engine.language), .string("Apache-2.0"), .string("Tether"),
            .string(""), .string("default"), .uint32(0),
            .string(""), .string(""), .string(""), .string(""), .string(""), .string(""), .string(""), .string(""),
        ]))
    }
}

/// IBus's key and state numbers the engine reads (ibustypes.h, ibuskeysyms.h).
enum IBusKey {
    static let controlMask: UInt32 = 1 << 2
    static let mod1Mask: UInt32 = 1 << 3
    static let superMask: UInt32 = 1 << 26
    static let hyperMask: UInt32 = 1 << 27
    static let metaMask: UInt32 = 1 << 28
    static let releaseMask: UInt32 = 1 << 30
    /// Modifiers that make a key a shortcut, which no keyboard takes.
    static let shortcutMasks = controlMask | mod1Mask | superMask | hyperMask | metaMask
    /// The client tells its surrounding text (`SetCapabilities`).
    static let surroundingTextCapability: UInt32 = 1 << 5

    static let backSpace: UInt32 = 0xff08, left: UInt32 = 0xff51, right: UInt32 = 0xff53
    /// evdev codes: GTK ignores a forwarded key whose code is wrong.
    static let backSpaceCode: UInt32 = 14, leftCode: UInt32 = 105, rightCode: UInt32 = 106

    /// The character a keysym types, as ibus_keyval_to_unicode gives it for
    /// Latin-1 and Unicode keysyms; nil for keys that type none.
    static func text(_ keyval: UInt32) -> String? {
        let scalar: UInt32
        switch keyval {
        case 0x20...0x7e, 0xa0...0xff: scalar = keyval
        case 0x0100_0100...0x0110_ffff: scalar = keyval - 0x0100_0000
        default: return nil
        }
        guard let character = Unicode.Scalar(scalar), !character.properties.generalCategory.isControl else { return nil }
        return String(character)
    }

    /// IBus's input purposes: what kind of text a field takes. Password and
    /// PIN fields are none: nil.
    static func kind(purpose: UInt32) -> FieldKindMapping {
        switch purpose {
        case 2, 3: .field(.number)
        case 4: .field(.phone)
        case 5: .field(.url)
        case 6: .field(.email)
        case 7: .field(.name)
        case 8, 9: .secret
        case 10: .field(.terminal)
        default: .field(.text)
        }
    }
}

enum FieldKindMapping: Equatable {
    case field(FieldKind)
    /// A password or PIN: no keyboard sees it.
    case secret
}

extension Unicode.GeneralCategory {
    var isControl: Bool {
        switch self {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
