import Testing
@testable import TetherExtension

/// The link's decisions, without sockets or locks: a connection here is a number.
@Suite struct HostLinkLifecycleTests {
    typealias Lifecycle = HostLinkLifecycle<Int>

    /// Actions as words, in order, for comparing.
    func words(_ actions: [Lifecycle.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .connect: "connect"
            case .listen(let connection): "listen(\(connection))"
            case .sayHello(let connection): "hello(\(connection))"
            case .closeConnection(let connection): "close(\(connection))"
            case .scheduleRetry(let delay): "retry(\(delay))"
            case .cancelRetry: "cancelRetry"
            case .stopWatching: "stopWatching"
            case .flushCalls: "flush"
            case .tell(.attached(let pid, let openAccess, let events)): "attached(\(pid), \(openAccess), \(events))"
            case .tell(.detached(let reason)): "detached(\(reason))"
            case .tell(.incompatible(let reason)): "incompatible(\(reason))"
            }
        }
    }

    func route(_ lifecycle: Lifecycle) -> String {
        switch lifecycle.callRoute {
        case .send(let connection): "send(\(connection))"
        case .wait: "wait"
        case .fail: "fail"
        }
    }

    /// Started by hand with a host up, attached to pid 42 on connection 1.
    func attached() -> Lifecycle {
        var link = Lifecycle()
        #expect(words(link.handle(.watch(lockHeld: true, socketExists: true))) == ["connect"])
        #expect(route(link) == "wait")
        #expect(words(link.handle(.connected(1))) == ["listen(1)", "hello(1)"])
        #expect(route(link) == "wait")
        #expect(words(link.handle(.welcomed(hostPID: 42, openAccess: false, events: ["e"])))
                == ["attached(42, false, [\"e\"])", "flush"])
        #expect(route(link) == "send(1)")
        #expect(link.hostPID == 42)
        return link
    }

    @Test func byHandItWaitsForAHostAndCallsFailUntilOneIsThere() {
        var link = Lifecycle()
        #expect(words(link.handle(.watch(lockHeld: false, socketExists: false))) == ["detached(no host is running)"])
        #expect(route(link) == "fail")
        #expect(words(link.handle(.hostLockTaken)) == ["connect"])
        #expect(route(link) == "wait")
    }

    @Test func aSocketUnitIsTriedOnceAndItsFailureSaysNoHostAndFailsTheWaitingCalls() {
        var link = Lifecycle()
        #expect(words(link.handle(.watch(lockHeld: false, socketExists: true))) == ["connect"])
        #expect(route(link) == "wait")
        #expect(words(link.handle(.connectFailed(lockHeld: false))) == ["flush", "detached(no host is running)"])
        #expect(route(link) == "fail")
        // One that took the lock meanwhile is tried again instead.
        var raced = Lifecycle()
        _ = raced.handle(.watch(lockHeld: false, socketExists: true))
        #expect(words(raced.handle(.connectFailed(lockHeld: true))) == ["retry(5)"])
    }

    @Test func aHostThatHoldsItsLockButDoesNotAnswerIsRetriedOnADoublingDelayResetByAHello() {
        var link = Lifecycle()
        _ = link.handle(.watch(lockHeld: true, socketExists: false))
        var delays: [String] = []
        for _ in 0..<10 {
            delays += words(link.handle(.connectFailed(lockHeld: true)))
            #expect(route(link) == "wait")
            #expect(words(link.handle(.retryDue)) == ["connect"])
        }
        #expect(delays == [5, 10, 20, 40, 80, 160, 320, 640, 1_000, 1_000].map { "retry(\($0))" })
        _ = link.handle(.connected(3))
        _ = link.handle(.welcomed(hostPID: 9, openAccess: true, events: []))
        #expect(words(link.handle(.connectionClosed(lockHeld: true)))
                == ["detached(lost the connection to host pid 9)", "retry(5)"])
        // Once the lock is free, it waits for the watcher instead of trying.
        _ = link.handle(.retryDue)
        #expect(words(link.handle(.connectFailed(lockHeld: false))) == ["flush"])
        #expect(route(link) == "fail")
        #expect(link.handle(.retryDue).isEmpty)
    }

    @Test func aNewHolderOfTheLockIsTriedAtOnceAndTheRetryClockIsGivenUp() {
        var link = Lifecycle()
        _ = link.handle(.watch(lockHeld: true, socketExists: false))
        _ = link.handle(.connectFailed(lockHeld: true))
        _ = link.handle(.retryDue)
        #expect(words(link.handle(.connectFailed(lockHeld: true))) == ["retry(10)"])
        #expect(words(link.handle(.hostLockTaken)) == ["cancelRetry", "connect"])
        #expect(words(link.handle(.connectFailed(lockHeld: true))) == ["retry(5)"])
        // While connecting, greeting or attached, a new holder changes nothing.
        _ = link.handle(.retryDue)
        #expect(link.handle(.hostLockTaken).isEmpty)
    }

    @Test func aStoppingHostIsSaidToHaveStoppedAndALostOneToHaveBeenLost() {
        var link = attached()
        #expect(link.handle(.hostStopping).isEmpty)
        #expect(link.hostIsStopping)
        #expect(words(link.handle(.connectionClosed(lockHeld: false))) == ["detached(host pid 42 stopped)", "flush"])
        #expect(link.hostPID == nil)
        // Still known as the detach is told: a launched extension that ends
        // with a host that stopped ends well (exit 0), not as a failure.
        #expect(link.hostIsStopping)
        #expect(route(link) == "fail")
        // The next host's connection starts with no stop said.
        _ = link.handle(.hostLockTaken)
        _ = link.handle(.connected(2))
        #expect(!link.hostIsStopping)
        _ = link.handle(.welcomed(hostPID: 43, openAccess: false, events: []))
        #expect(!link.hostIsStopping)
        #expect(words(link.handle(.connectionClosed(lockHeld: false)))
                == ["detached(lost the connection to host pid 43)", "flush"])
    }

    @Test func aRefusedHelloIsNotRepeatedUntilTheLockChangesHands() {
        var link = Lifecycle()
        _ = link.handle(.watch(lockHeld: true, socketExists: false))
        _ = link.handle(.connected(1))
        #expect(words(link.handle(.helloRefused(message: "no", incompatible: false)))
                == ["close(1)", "flush", "detached(the host refused this extension: no)"])
        // Its close, and later outcomes, start nothing.
        #expect(link.handle(.connectionClosed(lockHeld: true)).isEmpty)
        #expect(link.handle(.retryDue).isEmpty)
        #expect(route(link) == "fail")
        #expect(words(link.handle(.hostLockTaken)) == ["connect"])
    }

    @Test func anIncompatibleHostIsToldWithTheVersionThisSDKSpeaks() {
        var link = Lifecycle()
        _ = link.handle(.watch(lockHeld: true, socketExists: false))
        _ = link.handle(.connected(1))
        let said = words(link.handle(.helloRefused(message: "speaks 9", incompatible: true)))
        #expect(said.count == 3)
        #expect(said.last?.hasPrefix("incompatible(the host refused this extension: speaks 9 (this SDK speaks version ") == true)
    }

    @Test func anUnreadableAnswerClosesTheConnectionAndItsCloseRetries() {
        var link = Lifecycle()
        _ = link.handle(.watch(lockHeld: true, socketExists: false))
        _ = link.handle(.connected(1))
        #expect(words(link.handle(.helloUnreadable)) == ["close(1)"])
        #expect(words(link.handle(.connectionClosed(lockHeld: true))) == ["retry(5)"])
    }

    @Test func aLaunchedExtensionEndsWithItsLinkAndIsNeverReconnected() {
        var link = Lifecycle()
        #expect(words(link.handle(.adopted(7))) == ["listen(7)", "hello(7)"])
        // A host may say it stops before it answers the hello.
        _ = link.handle(.hostStopping)
        #expect(link.hostIsStopping)
        #expect(words(link.handle(.connectionClosed(lockHeld: true)))
                == ["flush", "detached(the host that launched this extension closed its link)"])
        #expect(link.handle(.hostLockTaken).isEmpty)
        #expect(route(link) == "fail")

        var welcomed = Lifecycle()
        _ = welcomed.handle(.adopted(7))
        _ = welcomed.handle(.welcomed(hostPID: 5, openAccess: false, events: []))
        #expect(words(welcomed.handle(.connectionClosed(lockHeld: true)))
                == ["detached(lost the connection to host pid 5)", "flush"])
        #expect(welcomed.handle(.retryDue).isEmpty)
        #expect(route(welcomed) == "fail")
    }

    @Test func aConfinedKeyboardKeepsItsOneConnectionAndSaysOnceThatItCannotAttachToANewHost() {
        var link = Lifecycle()
        #expect(words(link.handle(.attachedEarly(4, hostPID: 8, openAccess: false)))
                == ["listen(4)", "attached(8, false, [])"])
        #expect(link.reach == .confined)
        #expect(link.handle(.hostLockTaken).isEmpty)
        #expect(words(link.handle(.connectionClosed(lockHeld: true))) == ["detached(lost the connection to host pid 8)", "flush"])
        let cannot = "detached(a host is running, but this keyboard cannot attach to it)"
        #expect(words(link.handle(.hostLockTaken)) == [cannot])
        #expect(link.handle(.hostLockTaken).isEmpty)

        var unattached = Lifecycle()
        #expect(words(unattached.handle(.unattached(.detached(reason: "no host is running"), reach: .confined)))
                == ["detached(no host is running)"])
        #expect(words(unattached.handle(.hostLockTaken)) == [cannot])
    }

    @Test func closingEndsEverythingAndLateOutcomesAreClosedOrIgnored() {
        var link = attached()
        #expect(words(link.handle(.close)) == ["stopWatching", "cancelRetry", "close(1)", "flush"])
        #expect(route(link) == "fail")
        #expect(link.handle(.connectionClosed(lockHeld: true)).isEmpty)
        #expect(link.handle(.hostLockTaken).isEmpty)
        #expect(words(link.handle(.connected(2))) == ["close(2)"])

        var connecting = Lifecycle()
        _ = connecting.handle(.watch(lockHeld: true, socketExists: false))
        #expect(words(connecting.handle(.close)) == ["stopWatching", "cancelRetry", "flush"])
        #expect(connecting.handle(.connectFailed(lockHeld: true)).isEmpty)
    }
}
