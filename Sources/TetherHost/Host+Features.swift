import Logging
import TetherIPC
import TetherLog

/// Features: named liveness locks the host holds for whoever asks
/// (`FeatureDesk`); here, who asks, and what the host does with a change.
extension Host {
    /// `feature.start` by the user or by extension `starter` (nil: the user).
    func startFeature(_ target: NamedTarget, by starter: String?) -> Result<FeatureStarted, RPCError> {
        let asking = starter.map { name in
            FeatureDesk.Starter(name: name, openAccess: supervisor(named: name)?.manifest.openAccess
                                    ?? attachedEntry(named: name)?.openAccess ?? false)
        }
        let (answer, change) = features.start(target, by: asking)
        if let change { applyFeatureChange(change) }
        return answer
    }

    /// Extension `name` ended: the features it started without open
    /// access end too (nobody else may stop them).
    func endFeatures(startedBy name: String) {
        for target in features.ending(with: name) {
            if let change = features.stop(target, by: nil).1 { applyFeatureChange(change) }
        }
    }

    /// A feature started or stopped: logged, and its subscribers told.
    func applyFeatureChange(_ change: FeatureDesk.Change) {
        if let note = change.note { logger.warning("\(note)") }
        let state = change.running ? "started" : "stopped"
        logger.event(change.running ? .featureStarted : .featureStopped, "feature '\(change.name)' \(state)",
                     ["feature": .string(change.name)])
        publish(HostNotification.featureChanged, ["name": .string(change.name), "running": .bool(change.running)])
    }
}
