import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

/// `tether doctor` says, one line per mechanism, what this machine
/// enforces, with the fix for what it does not; given manifests, it exits
/// 1 when one asks for what cannot be enforced here.
@Suite(.timed) struct DoctorTests {
    static let mechanisms = ["cgroup", "memory", "pids", "landlock", "namespaces", "seccomp", "rlimits", "ibus"]

    @Test func everyMechanismHasALineAndWhatIsNotEnforcedHasAFix() throws {
        let group = try TestGroup()
        let text = try group.run(["doctor"])
        #expect(text.status == 0, "\(text.stderr)")
        for mechanism in Self.mechanisms {
            #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix(mechanism + " ") }, "\(mechanism): \(text.stdout)")
        }
        let json = try group.json(try group.run(["doctor", "--json"]))
        let findings = try #require(json["mechanisms"] as? [[String: Any]])
        #expect(findings.compactMap { $0["mechanism"] as? String } == Self.mechanisms)
        for finding in findings where finding["enforced"] as? Bool == false && finding["mechanism"] as? String != "rlimits" {
            #expect(finding["fix"] is String, "\(finding)")
        }
        #expect(json["ok"] as? Bool == true)
        // How many extensions a host started here could run at once.
        let descriptors = try #require(json["descriptors"] as? [String: Any])
        #expect((descriptors["runningExtensions"] as? Int ?? 0) > 0 && (descriptors["clients"] as? Int ?? 0) >= 64,
                "\(descriptors)")
    }

    /// A keyboard without open access is offline by seccomp: without it,
    /// that cannot be enforced, and doctor says so (exit 1).
    @Test func aManifestAskingForWhatCannotBeEnforcedExitsOne() throws {
        let group = try TestGroup()
        let manifest = group.dir.path + "/kb.extension.json"
        try writeFile(manifest, #"{"name":"kb","role":"keyboard","executable":"/bin/true"}"#)
        let here = try group.run(["doctor", "--extension", manifest])
        #expect(here.status == (KernelSupportProbe.seccomp && KernelSupportProbe.landlockScopes ? 0 : 1), "\(here.stdout)")
        let without = try tether(group.withGroup(["doctor", "--json", "--extension", manifest]), without: [.seccomp])
        #expect(without.status == 1, "\(without.stdout)")
        let extensions = try #require(try group.json(without)["extensions"] as? [[String: Any]])
        let unenforced = (extensions.first?["unenforced"] as? [String]) ?? []
        #expect(unenforced.contains { $0.hasPrefix("network") }, "\(unenforced)")
        let bad = try group.run(["doctor", "--extension", group.dir.path + "/missing.extension.json"])
        #expect(bad.status == 2)
    }
}

/// This kernel, as the sandbox tests see it.
enum KernelSupportProbe {
    static var seccomp: Bool { KernelSupport.current.seccomp }
    static var landlockScopes: Bool { KernelSupport.current.landlockScopes }
}
