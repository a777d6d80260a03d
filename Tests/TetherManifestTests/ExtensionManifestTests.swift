import Testing
import TetherJSON
import TetherManifest

/// The rules alone, with no file system: what the build plugin's tool and
/// the host share.
@Suite struct ExtensionManifestTests {
    /// The build plugin embeds `jsonValue` and `--manifest` prints it for
    /// the host: it must read back as the same manifest, for every role
    /// (an always widget once got an idleTimeout it then refused).
    @Test(arguments: ["widget", "keyboard", "notification"], ["always", "on-demand", nil])
    func jsonValueReadsBackAsTheSameManifest(role: String, activation: String?) throws {
        let field = activation.map { #","activation":"\#($0)""# } ?? ""
        let text = #"{"name":"x","role":"\#(role)","executable":"x","watchdog":2.5,"noRestartExitCodes":[3]\#(field)}"#
        let manifest = try ExtensionManifest.parse(Array(text.utf8), file: "x.extension.json")
        let again = try ExtensionManifest.parse(JSONCodec.serialize(manifest.jsonValue), file: "x.extension.json")
        #expect(again == manifest)
    }

    /// The executable is kept as written: whether it exists is the host's
    /// question, asked when it loads the manifest.
    @Test func parseTouchesNoFileAndKeepsTheExecutableAsWritten() throws {
        let text = #"{"name":"orders","role":"keyboard","executable":"no/such/file"}"#
        let manifest = try ExtensionManifest.parse(Array(text.utf8), file: "k.extension.json")
        #expect(manifest.executable == "no/such/file")
        #expect(manifest.memoryLimitMiB == ExtensionRole.keyboard.defaultMemoryLimitMiB)
        #expect(manifest.activation == .always)
        // EX_CONFIG (sysexits.h): a configuration error a restart cannot mend.
        #expect(manifest.noRestartExitCodes == [78])
    }

    @Test(arguments: [
        (#"{"name":"a","role":"widget","executable":"x","color":"red"}"#, "\"color\" is not a manifest field"),
        (#"{"name":"a","role":"widget","executable":""}"#, "\"executable\" is empty"),
        (#"{"name":"-a","role":"widget","executable":"x"}"#, "\"name\" must be"),
        (#"{"name":"a","role":"widget","executable":"x","idleTimeout":5}"#, "\"idleTimeout\" applies only"),
        (#"{"name":"a","role":"widget","executable":"x","memoryLimitMiB":8}"#, "\"memoryLimitMiB\" must be"),
        (#"{"name":"a","role":"widget","executable":"x","showOnDesktop":false}"#, "\"showOnDesktop\" applies only to the notification role"),
        (#"{"name":"a","role":"notification","executable":"x","showOnDesktop":"no"}"#, "\"showOnDesktop\" must be true or false"),
    ])
    func refusalsNameTheFileAndTheField(_ json: String, _ expected: String) {
        do {
            _ = try ExtensionManifest.parse(Array(json.utf8), file: "x.extension.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.description.hasPrefix("x.extension.json"))
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    /// A notification extension's deliveries are shown on the desktop
    /// unless its manifest says not; the field reads back as written.
    @Test func showOnDesktopIsTrueUnlessTheManifestSaysNot() throws {
        let shown = try ExtensionManifest.parse(Array(#"{"name":"n","role":"notification","executable":"x"}"#.utf8), file: "n")
        #expect(shown.showOnDesktop)
        let text = #"{"name":"n","role":"notification","executable":"x","showOnDesktop":false}"#
        let hidden = try ExtensionManifest.parse(Array(text.utf8), file: "n")
        #expect(!hidden.showOnDesktop)
        #expect(try ExtensionManifest.parse(JSONCodec.serialize(hidden.jsonValue), file: "n") == hidden)
    }
}
