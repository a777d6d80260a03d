import Logging
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherGroup
import TetherIPC
import TetherJSON
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// The host answers every request method by its description (invariant
/// 29): one route per method, each with the description's access, its
/// parameters read (and refused with the field at fault) before a handler
/// runs, and what a keyboard without open access may ask derived from it.
@Suite struct HostRouterTests {
    @Test func everyMethodIsRoutedWithItsDescriptionsAccess() throws {
        let scratch = try TemporaryDirectory("tether-router")
        let loop = try EventLoop()
        let group = try GroupDirectory(path: scratch.path + "/group")
        let host = Host(loop: loop, configuration: .init(group: group, manifests: [], logger: Logger(label: "test")))
        #expect(Set(host.router.routes.keys) == HostMethod.all)
        #expect(host.readOnlyMethods == [HostMethod.ping, HostMethod.status, HostMethod.hello, HostMethod.featureStart,
                                         HostMethod.featureList, HostMethod.extensionList, HostMethod.tokenGet,
                                         HostMethod.subscribe])
        #expect(host.router.routes[HostMethod.extensionStop]?.access == .user)
        #expect(host.router.routes[HostMethod.metrics]?.access == .user)
    }

    @Test func parametersAreReadBeforeTheHandlerRuns() throws {
        let connection = 7
        var router = HostRouter<Int>()
        var ran = 0
        router.on(HostMethods.featureStart) { _, target, respond in
            ran += 1
            respond(.success(FeatureStarted(name: target.name, started: true, pid: 42)))
        }
        var answers: [Result<JSONValue, RPCError>] = []
        let route = router.routes[HostMethod.featureStart]
        route?.handle(connection, ["nom": "x"]) { answers.append($0) }
        route?.handle(connection, ["name": "x"]) { answers.append($0) }
        #expect(ran == 1)
        guard answers.count == 2, case .failure(let refused) = answers[0], case .success(let answered) = answers[1] else {
            Issue.record("\(answers)")
            return
        }
        #expect(refused.message == "Invalid params: \"name\" is required")
        #expect(answered == FeatureStarted(name: "x", started: true, pid: 42).wire)
        #expect(try FeatureStarted(wire: answered) == FeatureStarted(name: "x", started: true, pid: 42))
    }
}
