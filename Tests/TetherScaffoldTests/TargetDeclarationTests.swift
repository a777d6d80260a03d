import Testing
@testable import TetherScaffold

/// What happens to the target `swift package add-target` wrote. The whole
/// path (the toolchain, dump-package, put back on failure) runs in
/// TetherPluginTests against real packages.
@Suite struct TargetDeclarationTests {
    let declaration = TargetDeclaration(name: "MyWidget", sdk: #".product(name: "TetherExtension", package: "tether")"#,
                                        plugin: #".plugin(name: "TetherManifestPlugin", package: "tether")"#)

    @Test func aTargetAloneOnItsLineIsLaidOutOneArgumentALine() throws {
        let text = "    targets: [\n        .executableTarget(name: \"App\"),\n        .executableTarget(name: \"MyWidget\"),\n    ]\n"
        let edited = try #require(declaration.replacingToolchainTarget(in: text))
        #expect(edited == """
                targets: [
                    .executableTarget(name: "App"),
                    .executableTarget(
                        name: "MyWidget",
                        dependencies: [.product(name: "TetherExtension", package: "tether")],
                        plugins: [.plugin(name: "TetherManifestPlugin", package: "tether")]
                    ),
                ]

            """)
    }

    @Test func aTargetInsideALineStaysOnOne() throws {
        let edited = try #require(declaration.replacingToolchainTarget(in: #"targets: [.executableTarget(name: "MyWidget")]"#))
        #expect(edited == "targets: [\(declaration.singleLine)]")
    }

    /// Anything but exactly one target as add-target writes it is left to
    /// the author: the caller puts Package.swift back.
    @Test(arguments: ["targets: []", #"a: [.executableTarget(name: "MyWidget"), .executableTarget(name: "MyWidget")]"#,
                      #"targets: [.executableTarget(name: "MyWidget", path: "x")]"#])
    func anUnknownFormIsNotEdited(_ text: String) {
        #expect(declaration.replacingToolchainTarget(in: text) == nil)
    }

    @Test func typeNamesAndTheirManifestNames() {
        #expect(ExtensionTemplate.isTypeName("MyWidget2"))
        for bad in ["", "2Widget", "My-Widget", "Wïdget", String(repeating: "a", count: 65)] {
            #expect(!ExtensionTemplate.isTypeName(bad), "\(bad)")
        }
        #expect(ExtensionTemplate.kebabCase("MyWidget") == "my-widget")
        #expect(ExtensionTemplate.kebabCase("HTTPClient") == "http-client")
        #expect(ExtensionTemplate.kebabCase("Orders2Widget") == "orders2-widget")
    }

    /// The sentences `tether new-extension` and the plugin's tool both print.
    @Test func aBadRoleOrNameIsSaidInOneSentence() throws {
        #expect(try ExtensionTemplate(typeName: "MyWidget", roleName: "keyboard").role == .keyboard)
        let role = #expect(throws: ScaffoldError.self) { try ExtensionTemplate(typeName: "MyWidget", roleName: "gadget") }
        #expect(role?.description == "'gadget' is not a role; use widget, keyboard or notification")
        let name = #expect(throws: ScaffoldError.self) { try ExtensionTemplate(typeName: "my-widget", roleName: "widget") }
        #expect(name?.description.hasPrefix("'my-widget' cannot name a Swift type and target") == true)
        let long = #expect(throws: ScaffoldError.self) {
            try ExtensionTemplate(typeName: String(repeating: "A", count: 65), roleName: "widget")
        }
        #expect(long?.description.contains("longer than 64 letters and digits") == true, "\(long?.description ?? "")")
        // 64 letters, but a manifest name of 95 (ab-ab-…): refused, not left to fail the first build.
        let kebab = #expect(throws: ScaffoldError.self) {
            try ExtensionTemplate(typeName: String(repeating: "Ab", count: 32), roleName: "widget")
        }
        #expect(kebab?.description.contains("longer than a name may be") == true, "\(kebab?.description ?? "")")
    }

    /// Well formed but taken: the new code would not build (a keyword, a
    /// module the target sees, a type the template's code names), said
    /// before anything is written; a word of the template's comments or
    /// strings is free.
    @Test func aNameTheNewCodeCannotTakeIsRefused() throws {
        let taken = [("class", "widget", "a Swift keyword"), ("Self", "keyboard", "a Swift keyword"),
                     ("Foundation", "widget", "a module the new target sees"),
                     ("TetherJSON", "notification", "a module the new target sees"),
                     ("Widget", "widget", "a name the widget template's code uses"),
                     ("Timeline", "widget", "a name the widget template's code uses"),
                     ("Date", "widget", "a name the widget template's code uses")]
        for (name, role, reason) in taken {
            let refused = #expect(throws: ScaffoldError.self) { try ExtensionTemplate(typeName: name, roleName: role) }
            #expect(refused?.description == "'\(name)' is \(reason), so the new code would not build; choose another name",
                    "\(refused?.description ?? "accepted")")
        }
        for free in ["MyWidget", "Howdy", "Hello", "Checks", "NewExtensionPlaceholder", "Testing"] {
            #expect(throws: Never.self) { try ExtensionTemplate(typeName: free, roleName: "widget") }
        }
        // Words of a string inside an interpolation's own string are no names either.
        #expect(throws: Never.self) { try ExtensionTemplate(typeName: "not", roleName: "keyboard") }
        #expect(ReservedNames.identifiers(in: #"let a = "x \(b ? "In" : "Out") y" + C // D"#) == ["let", "a", "b", "C"])
    }
}
