#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing
import TetherGroup
import TetherIPC
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// The features a host runs and who started each, with their events and
/// changes: real lock files in a group of the test's, no host, no process.
@Suite struct FeatureDeskTests {
    let scratch: TemporaryDirectory
    let group: GroupDirectory

    init() throws {
        scratch = try TemporaryDirectory("tether-features")
        group = try GroupDirectory(path: scratch.group)
    }

    func desk(maximum: Int = 256) -> FeatureDesk {
        FeatureDesk(group: group, maximum: maximum)
    }

    func isRunning(_ name: String) throws -> Bool {
        try LockProbe.status(ofLockAt: group.preparedLockPath(for: .feature(FeatureName(name)))).running
    }

    static func refusal<Answer>(_ result: Result<Answer, RPCError>) -> String? {
        guard case .failure(let error) = result else { return nil }
        return error.message
    }

    /// What the host does when an extension ends: each of its features
    /// stopped in turn, each change returned.
    static func end(_ desk: inout FeatureDesk, startedBy name: String) -> [FeatureDesk.Change] {
        desk.ending(with: name).compactMap { desk.stop($0, by: nil).1 }
    }

    static let grabby = FeatureDesk.Starter(name: "grabby", openAccess: false)
    static let pad = FeatureDesk.Starter(name: "pad", openAccess: true)

    /// The user starts and stops a feature: its lock is held between, each
    /// a change to tell; starting it again is no change.
    @Test func aFeatureIsHeldFromStartToStopAndEachIsAChange() throws {
        var desk = desk()
        let (started, change) = desk.start(NamedTarget(name: "sync"), by: nil)
        #expect(try started.get() == FeatureStarted(name: "sync", started: true, pid: Int64(getpid())))
        #expect(change == FeatureDesk.Change(name: "sync", running: true))
        #expect(try isRunning("sync"))
        #expect(desk.running == ["sync"])

        let (again, none) = desk.start(NamedTarget(name: "sync"), by: Self.grabby)
        #expect(try again.get().started == false)
        #expect(none == nil)
        // Starting what runs makes nobody its starter: the user's stays the user's.
        #expect(Self.refusal(desk.stop(NamedTarget(name: "sync"), by: "grabby").0)
            == "'grabby' may stop only a feature it started; it did not start 'sync'")

        let (stopped, ended) = desk.stop(NamedTarget(name: "sync"), by: nil)
        #expect(try stopped.get() == FeatureStopped(name: "sync"))
        #expect(ended == FeatureDesk.Change(name: "sync", running: false))
        #expect(try !isRunning("sync"))
        #expect(Self.refusal(desk.stop(NamedTarget(name: "sync"), by: nil).0) == "feature 'sync' is not running in this host")
    }

    /// The host's ceiling: the next is refused, and its lock never taken.
    @Test func featuresBeyondTheCeilingAreRefused() throws {
        var desk = desk(maximum: 3)
        for index in 0..<3 { #expect(throws: Never.self) { try desk.start(NamedTarget(name: "f\(index)"), by: nil).0.get() } }
        let (refused, change) = desk.start(NamedTarget(name: "one-too-many"), by: nil)
        #expect(Self.refusal(refused) == "the host already runs 3 features, its limit; stop one first")
        #expect(change == nil)
        #expect(try !isRunning("one-too-many"))
        #expect(desk.count == 3)
    }

    /// An extension runs at most 16 it started; another extension and the
    /// user are not held to its count.
    @Test func anExtensionRunsAtMostSixteenItStarted() throws {
        var desk = desk()
        for index in 0..<16 { #expect(throws: Never.self) { try desk.start(NamedTarget(name: "g\(index)"), by: Self.grabby).0.get() } }
        #expect(Self.refusal(desk.start(NamedTarget(name: "g16"), by: Self.grabby).0)
            == "'grabby' already runs 16 features it started, its limit; stop one first")
        #expect(try !isRunning("g16"))
        #expect(throws: Never.self) { try desk.start(NamedTarget(name: "p0"), by: Self.pad).0.get() }
        #expect(throws: Never.self) { try desk.start(NamedTarget(name: "u0"), by: nil).0.get() }
        // One stopped makes room for one more.
        #expect(throws: Never.self) { try desk.stop(NamedTarget(name: "g0"), by: "grabby").0.get() }
        #expect(throws: Never.self) { try desk.start(NamedTarget(name: "g16"), by: Self.grabby).0.get() }
    }

    /// An extension stops only what it started; the user stops anything.
    @Test func anExtensionStopsOnlyWhatItStarted() throws {
        var desk = desk()
        _ = desk.start(NamedTarget(name: "mine"), by: Self.grabby)
        _ = desk.start(NamedTarget(name: "users"), by: nil)
        #expect(Self.refusal(desk.stop(NamedTarget(name: "mine"), by: "pad").0)
            == "'pad' may stop only a feature it started; it did not start 'mine'")
        #expect(Self.refusal(desk.stop(NamedTarget(name: "users"), by: "grabby").0)
            == "'grabby' may stop only a feature it started; it did not start 'users'")
        #expect(try isRunning("mine") && isRunning("users"))
        #expect(throws: Never.self) { try desk.stop(NamedTarget(name: "mine"), by: "grabby").0.get() }
        #expect(throws: Never.self) { try desk.stop(NamedTarget(name: "users"), by: nil).0.get() }
    }

    /// What an extension without open access started ends with it, each a
    /// change; with open access it stays, the user's to stop.
    @Test func featuresEndWithAStarterWithoutOpenAccess() throws {
        var desk = desk()
        _ = desk.start(NamedTarget(name: "g1"), by: Self.grabby)
        _ = desk.start(NamedTarget(name: "g0"), by: Self.grabby)
        _ = desk.start(NamedTarget(name: "kept"), by: Self.pad)
        _ = desk.start(NamedTarget(name: "users"), by: nil)
        #expect(desk.ending(with: "grabby") == [NamedTarget(name: "g0"), NamedTarget(name: "g1")])
        #expect(Self.end(&desk, startedBy: "grabby") == [FeatureDesk.Change(name: "g0", running: false),
                                                          FeatureDesk.Change(name: "g1", running: false)])
        #expect(try !isRunning("g0") && !isRunning("g1"))
        #expect(desk.ending(with: "pad").isEmpty)
        #expect(desk.running == ["kept", "users"])
        // The user may stop what an extension with open access left, and start what ended.
        #expect(throws: Never.self) { try desk.stop(NamedTarget(name: "kept"), by: nil).0.get() }
        #expect(throws: Never.self) { try desk.start(NamedTarget(name: "g0"), by: nil).0.get() }
        // Nothing it started is counted against it once ended.
        for index in 0..<16 { #expect(throws: Never.self) { try desk.start(NamedTarget(name: "n\(index)"), by: Self.grabby).0.get() } }
    }

    /// A feature held outside the host is refused with its holder, and
    /// listed as another's; a bad name is the caller's error.
    @Test func aFeatureHeldElsewhereIsRefusedAndListedAsAnothers() throws {
        var desk = desk()
        let path = try group.preparedLockPath(for: .feature(FeatureName("outside")))
        let other = try #require(try LivenessLock.tryAcquire(path: path, label: "feature outside"))
        defer { other.release() }
        #expect(Self.refusal(desk.start(NamedTarget(name: "outside"), by: nil).0)
            == "feature 'outside' is already running outside the host (pid \(getpid()))")
        _ = desk.start(NamedTarget(name: "inside"), by: nil)
        // A file no feature could be named by, held: nobody's feature.
        let planted = try #require(try LivenessLock.tryAcquire(path: GroupDirectory.featureLocksPath(of: group.path) + "/Not A Name.lock",
                                                                label: "planted"))
        defer { planted.release() }
        #expect(desk.list().features.map { "\($0.name) \($0.owner)" } == ["inside host", "outside other"])
        let (invalid, change) = desk.start(NamedTarget(name: "../up"), by: nil)
        guard case .failure(let error) = invalid else { Issue.record("a bad name was started"); return }
        #expect(error.code == RPCError.invalidParams("").code)
        #expect(change == nil)
    }

    /// The host's stop: every lock released at once.
    @Test func releaseAllLetsEveryLockGo() throws {
        var desk = desk()
        _ = desk.start(NamedTarget(name: "a"), by: nil)
        _ = desk.start(NamedTarget(name: "b"), by: Self.grabby)
        #expect(desk.count == 2)
        desk.releaseAll()
        #expect(try !isRunning("a") && !isRunning("b"))
        #expect(desk.running.isEmpty)
        #expect(desk.ending(with: "grabby").isEmpty)
    }

    /// A reader's record lock on a feature's lock file would keep every
    /// holder out: the file is replaced, and the change says so, to be warned of.
    @Test func aReadLockedFileIsReplacedAndTheChangeSaysSo() throws {
        var desk = desk()
        let path = try group.preparedLockPath(for: .feature(FeatureName("held")))
        let reader = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(reader >= 0)
        defer { close(reader) }
        var record = flock()
        record.l_type = Int16(F_RDLCK)
        record.l_whence = Int16(SEEK_SET)
        try #require(fcntl(reader, F_SETLK, &record) == 0)
        let (started, change) = desk.start(NamedTarget(name: "held"), by: nil)
        #expect(try started.get().started)
        #expect(change?.note == "\(path) was read-locked by pid \(getpid()), which keeps every holder out; replaced it with a new lock file",
                "\(String(describing: change))")
        #expect(try isRunning("held"))
    }

    /// The host's desk has the ceiling the host was configured with, and a
    /// refusal reaches whoever asked.
    @Test func theHostsCeilingIsItsConfiguration() throws {
        let host = Host(loop: try EventLoop(),
                        configuration: .init(group: group, manifests: [], logger: Logger(label: "test"), maximumFeatures: 2))
        defer { host.features.releaseAll() }
        for name in ["a", "b"] { #expect(throws: Never.self) { try host.startFeature(NamedTarget(name: name), by: nil).get() } }
        guard case .failure(let refusal) = host.startFeature(NamedTarget(name: "c"), by: nil) else {
            Issue.record("a third feature started under a ceiling of 2")
            return
        }
        #expect(refusal.message == "the host already runs 2 features, its limit; stop one first")
        #expect(host.features.running == ["a", "b"])
        #expect(Host.Configuration.defaultMaximumFeatures == 256)
    }

    /// The host's own loop when an extension ends: what it started without
    /// open access stops (an extension unknown to it has none); the rest stays.
    @Test func theHostEndsAnEndedExtensionsFeatures() throws {
        let host = Host(loop: try EventLoop(), configuration: .init(group: group, manifests: [], logger: Logger(label: "test")))
        defer { host.features.releaseAll() }
        #expect(throws: Never.self) { try host.startFeature(NamedTarget(name: "mine"), by: "grabby").get() }
        #expect(throws: Never.self) { try host.startFeature(NamedTarget(name: "users"), by: nil).get() }
        host.endFeatures(startedBy: "grabby")
        #expect(host.features.running == ["users"])
        #expect(try !isRunning("mine"))
    }
}
