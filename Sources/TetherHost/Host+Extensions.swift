import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest

/// Starting, stopping, launching idle widgets and reloading extensions on
/// request; a connection's end detaches its extension.
extension Host {
    /// `extension.start {name}`: launch it if it is not running and wait
    /// for its hello (at most `startWait`); `{name, state, pid, attached}`.
    func startExtension(_ target: NamedTarget, respond: @escaping (Result<ExtensionStatus, RPCError>) -> Void) {
        let name = target.name
        guard let supervisor = supervisor(named: name) else {
            return respond(.failure(.refused("no extension named '\(name)' in this host's manifests")))
        }
        // No room for one more: said now, not after a wait.
        if launchSlots.isFull, supervisor.holdsNoSlot {
            return respond(.failure(.refused("extension '\(name)' cannot start now: \(launchSlots.refusal)")))
        }
        guard !isStopping, supervisor.demand(explicitly: true) else {
            return respond(.failure(.refused("extension '\(name)' cannot start: it is \(supervisor.state.name)")))
        }
        let timer = LoopTimer(loop: loop)
        var answered = false
        let answer: (AttachedExtension?) -> Void = { entry in
            guard !answered else { return }
            answered = true
            timer.close()
            var result = supervisor.status
            result.attached = entry != nil
            if let entry { result.pid = entry.pid }
            if entry == nil, supervisor.state.isFailed {
                return respond(.failure(.refused("extension '\(name)' failed to start; see the host's log")))
            }
            respond(.success(result))
        }
        let cancel = whenAttached(name, answer)
        guard !answered else { return }
        timer.start(afterMilliseconds: HostMethods.extensionStartWaitMilliseconds) {
            cancel()
            answer(nil)
        }
    }

    /// `extension.stop {name}`: SIGTERM to its group, SIGKILL after the
    /// grace; answered once it is gone. An on-demand one rests idle after.
    func stopExtension(_ target: NamedTarget, respond: @escaping (Result<ExtensionStopped, RPCError>) -> Void) {
        let name = target.name
        guard let supervisor = supervisor(named: name) else {
            let byHand = attachedEntry(named: name).map { " (pid \($0.pid) was started by hand; stop it there)" } ?? ""
            return respond(.failure(.refused("no extension named '\(name)' in this host's manifests\(byHand)")))
        }
        guard !isStopping else { return respond(.failure(.refused("the host is stopping every extension"))) }
        let wasRunning = supervisor.hasProcess
        supervisor.stop {
            respond(.success(ExtensionStopped(name: name, stopped: wasRunning, state: supervisor.state.name)))
        }
    }

    /// Launches idle on-demand widgets (all, or the one named); their names.
    func launchIdleWidgets(named name: String?) -> [String] {
        var launched: [String] = []
        guard !isStopping else { return [] }
        for supervisor in supervisors.all where supervisor.manifest.role == .widget && supervisor.isOnDemand
            && (supervisor.state.isIdle || supervisor.isEnding) && (name == nil || supervisor.manifest.name == name) {
            if supervisor.demand() { launched.append(supervisor.manifest.name) }
        }
        return launched
    }

    func detach(_ connection: RPCConnection) {
        userPeers.remove(ObjectIdentifier(connection))
        if let link = links.removeValue(forKey: ObjectIdentifier(connection)) {
            linkKeys[link.name]?.remove(ObjectIdentifier(connection))
            if linkKeys[link.name]?.isEmpty == true { linkKeys[link.name] = nil }
            // An extension ended: what its launch cost goes back soon after.
            server?.scheduleTrim()
            if connection.closedForMisbehaving { linkBroken(link.name, pid: connection.peer?.pid) }
        }
        // Nobody is left to answer: what its pushes hold goes now.
        endPushes(of: ObjectIdentifier(connection), "the connection that sent it closed")
        subscribers.remove(connection)
        stopWatchingWidgets(connection)
        guard let entry = attached.remove(ObjectIdentifier(connection)) else { return }
        entry.watchdog?.stop()
        if !isStopping { logger.info("extension '\(entry.name)' detached") }
        publish(HostNotification.extensionChanged, entry.status(attached: false))
        widgetAttachmentChanged(entry)
        // One started by hand ended (a launch's end is its supervisor's `.gone`).
        if !entry.managed, attachedEntry(named: entry.name) == nil { endFeatures(startedBy: entry.name) }
    }

    /// The host closed its own child's link for what came over it (before
    /// its hello or after): it can be reached no more, nor watched, so it
    /// is ended as an unresponsive one is and its restart policy applies
    /// (the SDK exits by itself once its link closes; a script may not).
    private func linkBroken(_ name: String, pid: Int32?) {
        guard !isStopping, let supervisor = supervisor(named: name), let pid, supervisor.pid == pid,
              !supervisor.isEnding else { return }
        metrics.extensionUnresponsive(metricLabel(name))
        logger.event(.extensionUnresponsive, level: .error,
                     "extension '\(name)' broke its link's protocol (garbage, a frame past 1 MiB, or answers left unread); killing it",
                     ["extension": .string(name), "pid": .number(pid), "managed": .bool(true), "cause": .string("protocol")])
        supervisor.killUnresponsive()
    }

    func reload(_ request: ReloadRequest) -> Result<ReloadAnswer, RPCError> {
        let name = request.name
        let widgets = attached.all.filter { $0.role == .widget && isUsable($0) && (name == nil || $0.name == name) }
        // An idle on-demand widget is launched: its first timeline is the reload.
        let launched = isStopping ? [] : launchIdleWidgets(named: name)
        if let name, widgets.isEmpty, launched.isEmpty {
            return .failure(.refused("no widget named '\(name)' is attached"))
        }
        for widget in widgets {
            widget.connection.notify(HostNotification.reload, ["reason": "host"])
            if widget.managed { supervisor(named: widget.name)?.noteActivity() }
        }
        return .success(ReloadAnswer(reloaded: (widgets.map(\.name) + launched).sorted(), launched: launched.sorted()))
    }
}
